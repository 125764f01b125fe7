package dev.airlock.safety;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The fixed context the table tests judge commands in, and the tables' reader. */
final class GuardTables {
    static final String HOME = "/home/dev";
    static final String AIRLOCK_HOME = "/srv/airlock";
    static final String CWD = "/work/proj";
    static final Map<String, String> VARS = Map.of("HOME", HOME, "USER", "dev", "LOGNAME", "dev",
            "AIRLOCK_REAL_HOME", HOME, "TMPDIR", "/tmp/airlock-priv/tmp");
    static final ProtectedPaths RULES = new ProtectedPaths(List.of(HOME, AIRLOCK_HOME + "/home"), List.of("/etc"),
            List.of(AIRLOCK_HOME), List.of(), List.of("/tmp/airlock-priv"));

    private GuardTables() {
    }

    /** The lexical verdict: hardline, deny, ask or allow (what the guard decides before resolving on a target). */
    static String verdict(String command) {
        CommandReader.Findings f = CommandReader.read(command, VARS, "dev", HOME, CWD);
        if (!f.hardline().isEmpty()) {
            return "hardline";
        }
        Tier max = Tier.FREE;
        for (CommandReader.WriteTarget w : f.writes()) {
            if (w.ifDirectory() != null) {
                continue; // judged on the target, where it is known whether DEST is a directory
            }
            Optional<PathPattern> p = PathPattern.of(w.word(), w.cwd());
            if (p.isEmpty() && ProtectedPaths.unresolvedNeedsApproval(w.via(), command) && max == Tier.FREE) {
                max = Tier.APPROVAL; // as Safety does: an unresolvable place that may be protected needs a human
            }
            if (p.isPresent()) {
                Tier t = RULES.classify(p.get(), w.access()).tier();
                if (w.mention() && t == Tier.HARD) {
                    t = Tier.APPROVAL; // as Safety does: a path a command the guard cannot read names asks, never denies
                }
                if (t.compareTo(max) > 0) {
                    max = t;
                }
            }
        }
        return switch (max) {
            case HARD -> "deny";
            case APPROVAL -> "ask";
            case FREE -> "allow";
        };
    }

    static List<String> lines(String resource) {
        List<String> out = new ArrayList<>();
        try (InputStream in = GuardTables.class.getResourceAsStream(resource);
             BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    out.add(line);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** Decodes the tables' escapes: ⟨ESC⟩ ⟨NUL⟩ ⟨NL⟩ ⟨CR⟩ ⟨U+XXXX⟩. */
    static String decode(String s) {
        StringBuilder b = new StringBuilder();
        int i = 0;
        while (i < s.length()) {
            int open = s.indexOf('⟨', i);
            if (open < 0) {
                b.append(s, i, s.length());
                break;
            }
            int close = s.indexOf('⟩', open);
            b.append(s, i, open);
            String name = s.substring(open + 1, close);
            switch (name) {
                case "ESC" -> b.append('\033');
                case "NUL" -> b.append('\0');
                case "NL" -> b.append('\n');
                case "CR" -> b.append('\r');
                default -> b.appendCodePoint(Integer.parseInt(name.substring(2), 16));
            }
            i = close + 1;
        }
        return b.toString();
    }
}
