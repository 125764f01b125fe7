package dev.airlock.safety;

import dev.airlock.shell.Shell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Resolves paths on the target in one script: for each path its spelled absolute form, its
 * canonical form (symlinks followed, missing tails kept) and its link entry (the parent resolved,
 * the last name kept); for a glob, also every existing match; for a path with an unknown tail,
 * its literal prefix.
 */
final class TargetResolver {
    /** Prints the canonical form of an absolute path whose tail may not exist yet. */
    static final String FUNCTIONS = String.join("\n",
            "canon() {",
            "  q=$1; n=0",
            "  case $q in /*) ;; *) q=/$q ;; esac",
            "  while :; do",
            "    d=$q; r=",
            "    while [ \"$d\" != / ] && [ -n \"$d\" ] && [ ! -e \"$d\" ] && [ ! -L \"$d\" ]; do",
            "      r=/${d##*/}$r; d=${d%/*}; [ -n \"$d\" ] || d=/",
            "    done",
            "    if [ -L \"$d\" ] && [ ! -e \"$d\" ]; then",
            "      l=$(readlink -- \"$d\") || break",
            "      case $l in /*) ;; *) l=${d%/*}/$l ;; esac",
            "      q=$l$r; n=$((n+1)); [ \"$n\" -lt 40 ] || break",
            "      continue",
            "    fi",
            "    x=$(readlink -f -- \"$d\" 2>/dev/null) || x=",
            "    [ -n \"$x\" ] || x=$(realpath -- \"$d\" 2>/dev/null) || x=",
            "    [ -n \"$x\" ] || x=$(cd -P -- \"$d\" 2>/dev/null && pwd -P) || x=",
            "    [ -n \"$x\" ] || x=$d",
            "    [ \"$x\" = / ] && x=",
            "    if [ -n \"$x$r\" ]; then printf '%s%s' \"$x\" \"$r\"; else printf /; fi",
            "    return 0",
            "  done",
            "  printf '%s' \"$q\"",
            "}",
            "abs() { case $1 in /*) a=$1 ;; *) a=$PWD/$1 ;; esac",
            "  while [ \"$a\" != / ] && [ \"${a%/}\" != \"$a\" ]; do a=${a%/}; done; }",
            "e() { abs \"$2\"",
            "  printf '%s\\tL\\t%s\\0' \"$1\" \"$a\"",
            "  printf '%s\\tC\\t' \"$1\"; canon \"$a\"; printf '\\0'",
            "  b=${a##*/}; d=${a%/*}; [ -n \"$d\" ] || d=/",
            "  printf '%s\\tP\\t' \"$1\"; canon \"$d\"; printf '/%s\\0' \"$b\"; }",
            "r() { abs \"$2\"",
            "  printf '%s\\tQ\\t%s\\0' \"$1\" \"$a\"",
            "  printf '%s\\tR\\t' \"$1\"; canon \"$a\"; printf '\\0'; }",
            "");

    /** One resolved form of a requested path. */
    record Variant(char kind, PathPattern pattern) {
        /** The canonical form: what a write actually changes. */
        boolean canonical() {
            return kind == 'C' || kind == 'R' || kind == 'G';
        }
    }

    private TargetResolver() {
    }

    /** A path to resolve; with {@code ifDirectory}, only when that path is an existing directory on the target. */
    record Item(PathPattern pattern, PathPattern ifDirectory) {
    }

    static String script(List<Item> items) {
        StringBuilder s = new StringBuilder("set +f\n").append(FUNCTIONS);
        for (int k = 0; k < items.size(); k++) {
            PathPattern p = items.get(k).pattern();
            PathPattern cond = items.get(k).ifDirectory();
            boolean conditional = cond != null && cond.isConcrete();
            if (conditional) {
                s.append("if [ -d ").append(Shell.quote(cond.literalPrefix(cond.comps.size()))).append(" ]; then\n");
            }
            item(s, k, p);
            if (conditional) {
                s.append("fi\n");
            }
        }
        s.append("exit 0\n");
        return s.toString();
    }

    private static void item(StringBuilder s, int k, PathPattern p) {
        {
            if (p.isConcrete()) {
                s.append("e ").append(k).append(' ').append(Shell.quote(p.literalPrefix(p.comps.size()))).append('\n');
                return;
            }
            int lc = p.literalCount();
            s.append("r ").append(k).append(' ').append(Shell.quote(p.literalPrefix(lc))).append('\n');
            if (p.open == PathPattern.Open.NONE) {
                s.append("c=0; for f in ").append(globSource(p)).append("; do [ -e \"$f\" ] || [ -L \"$f\" ] || continue;")
                        .append(" c=$((c+1)); [ \"$c\" -le 256 ] || break; e ").append(k).append(" \"$f\"; done\n");
            }
        }
    }

    /**
     * Each pattern's resolved variants, by index: answered in this JVM where the shell offers
     * {@link TargetShell#hostPaths() the host's paths} and no pattern needs the shell's globbing,
     * else by the script. Both give the same records to the same reading.
     */
    static Map<Integer, List<Variant>> resolve(TargetShell shell, List<Item> items) throws IOException {
        Optional<HostPaths> host = shell.hostPaths();
        if (host.isPresent()) {
            try {
                return read(items, records(host.get(), items));
            } catch (HostPaths.Unanswerable e) {
                // the script sees what Java cannot: it answers
            }
        }
        return read(items, new String(shell.run(script(items)), StandardCharsets.UTF_8));
    }

    /**
     * The records {@link #script} prints, computed with {@code host}.
     *
     * @throws HostPaths.Unanswerable for a glob (its expansion is the shell's) or what {@link HostPaths} cannot see
     */
    static String records(HostPaths host, List<Item> items) throws HostPaths.Unanswerable {
        StringBuilder out = new StringBuilder();
        for (int k = 0; k < items.size(); k++) {
            PathPattern p = items.get(k).pattern();
            PathPattern cond = items.get(k).ifDirectory();
            if (cond != null && cond.isConcrete() && !host.isDirectory(cond.literalPrefix(cond.comps.size()))) {
                continue;
            }
            if (p.isConcrete()) {
                String a = host.abs(p.literalPrefix(p.comps.size()));
                out.append(k).append("\tL\t").append(a).append('\0');
                out.append(k).append("\tC\t").append(host.canon(a)).append('\0');
                String b = a.substring(a.lastIndexOf('/') + 1);
                String d = a.substring(0, Math.max(a.lastIndexOf('/'), 0));
                out.append(k).append("\tP\t").append(host.canon(d.isEmpty() ? "/" : d)).append('/').append(b).append('\0');
                continue;
            }
            if (p.open == PathPattern.Open.NONE) {
                throw new HostPaths.Unanswerable("a glob is expanded by the shell");
            }
            String a = host.abs(p.literalPrefix(p.literalCount()));
            out.append(k).append("\tQ\t").append(a).append('\0');
            out.append(k).append("\tR\t").append(host.canon(a)).append('\0');
        }
        return out.toString();
    }

    /** The variants in the records a resolution printed. */
    private static Map<Integer, List<Variant>> read(List<Item> items, String all) {
        List<PathPattern> patterns = new ArrayList<>();
        for (Item i : items) {
            patterns.add(i.pattern());
        }
        Map<Integer, List<Variant>> result = new LinkedHashMap<>();
        for (int k = 0; k < patterns.size(); k++) {
            result.put(k, new ArrayList<>());
        }
        for (String rec : all.split("\0")) {
            int t1 = rec.indexOf('\t');
            int t2 = t1 < 0 ? -1 : rec.indexOf('\t', t1 + 1);
            if (t1 <= 0 || t2 != t1 + 2) {
                continue;
            }
            int k;
            try {
                k = Integer.parseInt(rec.substring(0, t1));
            } catch (NumberFormatException e) {
                continue;
            }
            if (!result.containsKey(k)) {
                continue;
            }
            char kind = rec.charAt(t1 + 1);
            String path = rec.substring(t2 + 1);
            if (!path.startsWith("/")) {
                continue;
            }
            PathPattern p = patterns.get(k);
            switch (kind) {
                case 'L', 'C', 'P' -> result.get(k).add(new Variant(p.isConcrete() ? kind : 'G', PathPattern.concrete(path)));
                case 'Q', 'R' -> result.get(k).add(new Variant(kind, p.withPrefix(path, p.literalCount())));
                default -> {
                    // not ours
                }
            }
        }
        return result;
    }

    /** The pattern as shell glob source: literal runs quoted, glob characters bare. */
    static String globSource(PathPattern p) {
        StringBuilder b = new StringBuilder(p.absolute ? "/" : "");
        for (int c = 0; c < p.comps.size(); c++) {
            if (c > 0) {
                b.append('/');
            }
            String comp = p.comps.get(c);
            StringBuilder lit = new StringBuilder();
            for (int i = 0; i < comp.length(); i++) {
                char ch = comp.charAt(i);
                if (ch == Marks.STAR || ch == Marks.QUESTION || ch == Marks.BRACKET) {
                    if (lit.length() > 0) {
                        b.append(Shell.quote(lit.toString()));
                        lit.setLength(0);
                    }
                    if (ch == Marks.STAR) {
                        b.append('*');
                    } else if (ch == Marks.QUESTION) {
                        b.append('?');
                    } else {
                        int end = comp.indexOf(']', i + 2);
                        String body = end < 0 ? null : comp.substring(i + 1, end);
                        if (body != null && body.chars().allMatch(x -> Character.isLetterOrDigit(x) || x == '-' || x == '.' || x == '_' || x == '!')) {
                            b.append('[').append(body).append(']');
                            i = end;
                        } else {
                            b.append('?');
                            if (end >= 0) {
                                i = end;
                            }
                        }
                    }
                } else {
                    lit.append(ch);
                }
            }
            if (lit.length() > 0) {
                b.append(Shell.quote(lit.toString()));
            }
        }
        return b.length() == 0 ? "." : b.toString();
    }
}
