package dev.airlock.safety;

import dev.airlock.containment.Containment;
import dev.airlock.containment.StateWitness;
import dev.airlock.Capabilities;
import dev.airlock.DeniedException;
import dev.airlock.Target;
import dev.airlock.containment.OwnState;
import dev.airlock.settings.Settings;
import dev.airlock.shell.Shell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One environment's safety rules: the write tiers for the file API and the command guard for
 * exec, both ending in the same {@link ApprovalGate}, so a file has one rule whichever route
 * touches it. Paths are judged on the target: homes, symlinks and {@code ~} are the target's.
 */
public final class Safety {
    public static final String SAFE_ROOTS_KEY = "airlock.write.safe-roots";

    private final String backend;
    private final Target target;
    private final Containment containment;
    private final Settings settings;
    private final TargetShell shell;
    private final ApprovalGate.Reporter reporter;
    private final GuardMode.Verdict guard;
    private final ApprovalGate gate;
    private final Path localAirlockHome;
    private final boolean credentialsReadOnly;
    private final Object rulesLock = new Object();
    private volatile ProtectedPaths rules;

    /**
     * @param backend  the backend name
     * @param target   the probed target
     * @param containment the children's homes as the containment plan decided them
     * @param settings the environment's settings
     * @param caps     the backend's capabilities (for the guard mode)
     * @param channel  the human channel, if the runtime supplied one
     * @param shell    runs Airlock's own resolution scripts on the target
     * @param reporter receives {@code approved} and {@code denied} events
     */
    public Safety(String backend, Target target, Containment containment, Settings settings, Capabilities caps,
                  Optional<ApprovalChannel> channel, TargetShell shell, ApprovalGate.Reporter reporter) {
        this(backend, target, containment, settings, caps, channel, shell, reporter, Optional.empty());
    }

    /**
     * @param witness where commands can write Airlock's state, what it was when they could first
     *                run: approvals added after that are not read ({@link StateWitness})
     */
    public Safety(String backend, Target target, Containment containment, Settings settings, Capabilities caps,
                  Optional<ApprovalChannel> channel, TargetShell shell, ApprovalGate.Reporter reporter,
                  Optional<StateWitness> witness) {
        this(backend, target, containment, settings, caps, channel, shell, reporter, witness, false);
    }

    /**
     * @param credentialsReadOnly the kernel keeps the protected homes' credential dirs read-only for
     *                            commands ({@code Backend#credentialsReadOnly}): what needs approval
     *                            there elsewhere ({@code ~/.ssh/config}) is read-only here, for every tool
     */
    public Safety(String backend, Target target, Containment containment, Settings settings, Capabilities caps,
                  Optional<ApprovalChannel> channel, TargetShell shell, ApprovalGate.Reporter reporter,
                  Optional<StateWitness> witness, boolean credentialsReadOnly) {
        this.credentialsReadOnly = credentialsReadOnly;
        this.backend = backend;
        this.target = target;
        this.containment = containment;
        this.settings = settings;
        this.shell = shell;
        this.reporter = reporter;
        this.guard = GuardMode.decide(settings, caps);
        this.localAirlockHome = OwnState.operatorHome(settings);
        this.gate = new ApprovalGate(backend, targetId(target), settings, channel, new ApprovalStore(localAirlockHome, witness),
                reporter);
    }

    /** The hard-denied directories under every protected home, relative (for sandboxes that bind them read-only). */
    public static java.util.List<String> hardDeniedHomeDirs() {
        return ProtectedPaths.HOME_DIRS;
    }

    /** The hard-denied single files under every protected home, relative. */
    public static java.util.List<String> hardDeniedHomeFiles() {
        return ProtectedPaths.HOME_FILES;
    }

    /** The hard-denied files in Airlock's own state dir (settings, approvals, an env file), relative. */
    public static java.util.List<String> hardDeniedAirlockFiles() {
        return ProtectedPaths.AIRLOCK_FILES;
    }

    /** {@code user@host}: what "always" approvals are scoped to, with the backend. */
    public static String targetId(Target t) {
        return t.user() + "@" + t.hostname();
    }

    /** Whether the command guard is in force, and why (for {@code doctor}). */
    public GuardMode.Verdict guard() {
        return guard;
    }

    /** Where "always" approvals are kept. */
    public Path allowlistFile() {
        return localAirlockHome.resolve(ApprovalStore.FILE_NAME);
    }

    // ---------------------------------------------------------------- entry points

    /**
     * Judges a file operation on {@code path} (already {@code ~}-expanded): {@code write},
     * {@code delete}, {@code mkdirs} or {@code copyIn}.
     *
     * @throws DeniedException when the tier forbids it or approval was not given
     */
    public void checkWrite(String path, String operation) {
        Access access = switch (operation) {
            case "mkdirs" -> Access.MKDIR;
            case "delete" -> Access.TREE;
            case "copyIn" -> Access.INTO;
            default -> Access.WRITE;
        };
        Optional<PathPattern> p = PathPattern.of(neutralise(path), null);
        judge(List.of(new Candidate(p.orElse(null), path, access, operation, null, false)), "write", operation);
    }

    /**
     * Judges a user command before it runs (Airlock's own scripts never come here).
     *
     * @param cwd the command's working directory ({@code ~}-expanded), if set
     * @param env the variables the request sets
     * @throws DeniedException for a hardline command, a hard-denied write, or a write not approved
     */
    public void checkCommand(String command, Optional<String> cwd, Map<String, String> env) {
        if (!guard.on()) {
            return;
        }
        Map<String, String> vars = new HashMap<>();
        vars.put("HOME", target.home());
        vars.put("USER", target.user());
        vars.put("LOGNAME", target.user());
        vars.put("AIRLOCK_REAL_HOME", realHome());
        vars.put("TMPDIR", target.scratchDir());
        vars.put("TMP", target.scratchDir());
        vars.put("TEMP", target.scratchDir());
        vars.putAll(env);
        String userHome = target.passwdHome().isEmpty() ? realHome() : target.passwdHome();
        CommandReader.Findings f = CommandReader.read(command, vars, target.user(), userHome, cwd.orElse(null));
        if (!f.hardline().isEmpty()) {
            String why = f.hardline().get(0);
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("route", "exec");
            fields.put("tier", "hardline");
            fields.put("reason", why);
            reporter.report("denied", oneLine(command), fields);
            throw new DeniedException("Command denied: " + oneLine(why) + " is a hardline command; nothing unlocks it.");
        }
        List<Candidate> cs = new ArrayList<>();
        for (CommandReader.WriteTarget w : f.writes()) {
            Optional<PathPattern> p = PathPattern.of(w.word(), w.cwd());
            PathPattern dir = w.ifDirectory() == null ? null : PathPattern.of(w.ifDirectory(), w.cwd()).orElse(null);
            if (w.ifDirectory() != null && dir == null) {
                continue; // DEST is unknown; DEST itself was judged as written
            }
            if (w.mention() && p.isEmpty()) {
                continue; // a mention that cannot be placed is not a write the guard knows of
            }
            boolean ask = p.isEmpty() && ProtectedPaths.unresolvedNeedsApproval(w.via(), command);
            String shown = p.isEmpty() ? Marks.source(w.word()).replace(Marks.UNKNOWN, '?') : Marks.plain(w.word());
            cs.add(new Candidate(p.orElse(null), shown, w.access(), w.via(), dir, ask, w.mention()));
        }
        if (!cs.isEmpty()) {
            judge(cs, "exec", "exec: " + oneLine(command));
        }
    }

    // ---------------------------------------------------------------- judging

    /**
     * A path an operation may write; {@code ifDirectory}: only when that path is a directory on the target;
     * {@code askUnresolved}: its place cannot be resolved and it may be a protected file, so a human decides;
     * {@code mention}: a command the guard cannot read names it, so a protected one asks and is never denied.
     */
    private record Candidate(PathPattern pattern, String shown, Access access, String via, PathPattern ifDirectory,
                             boolean askUnresolved, boolean mention) {
        Candidate(PathPattern pattern, String shown, Access access, String via, PathPattern ifDirectory, boolean askUnresolved) {
            this(pattern, shown, access, via, ifDirectory, askUnresolved, false);
        }
    }

    private void judge(List<Candidate> cs, String route, String operation) {
        ProtectedPaths r = rules();
        List<Candidate> resolve = new ArrayList<>();
        Map<String, String> unresolved = new LinkedHashMap<>();
        for (Candidate c : cs) {
            if (c.pattern == null) {
                if (r.hasSafeRoots()) {
                    throw deny(c, route, "unknown", "Write denied: cannot tell where '" + oneLine(c.shown)
                            + "' points, and " + SAFE_ROOTS_KEY + " allows writes inside the safe roots only.");
                }
                if (c.askUnresolved) {
                    unresolved.putIfAbsent(c.shown + " (" + c.via + ")",
                            "a write by " + c.via + " to a place Airlock cannot resolve, which may be a protected file,");
                }
                continue;
            }
            if (ProtectedPaths.isSink(c.pattern)) {
                continue;
            }
            if (c.ifDirectory == null) {
                checkVariant(r, c, c.pattern, 'S', route);
            }
            resolve.add(c);
        }
        if (resolve.isEmpty()) {
            approveAll(unresolved, route, operation);
            return;
        }
        List<TargetResolver.Item> patterns = new ArrayList<>();
        for (Candidate c : resolve) {
            patterns.add(new TargetResolver.Item(c.pattern, c.ifDirectory));
        }
        Map<Integer, List<TargetResolver.Variant>> variants;
        try {
            variants = TargetResolver.resolve(shell, patterns);
        } catch (IOException e) {
            throw deny(resolve.get(0), route, "unresolved", "Write denied: cannot resolve '" + oneLine(resolve.get(0).shown)
                    + "' on the target to check it (" + oneLine(e.getMessage()) + ").");
        }
        Map<String, String> approvals = new LinkedHashMap<>();
        for (int k = 0; k < resolve.size(); k++) {
            Candidate c = resolve.get(k);
            List<TargetResolver.Variant> vs = variants.getOrDefault(k, List.of());
            if (vs.isEmpty() && c.pattern.isConcrete() && c.ifDirectory == null && !c.mention) {
                throw deny(c, route, "unresolved", "Write denied: cannot resolve '" + oneLine(c.shown) + "' on the target to check it.");
            }
            String key = null;
            String reason = null;
            for (TargetResolver.Variant v : vs) {
                ProtectedPaths.Verdict verdict = checkVariant(r, c, v.pattern(), v.kind(), route);
                if (verdict.tier() == Tier.APPROVAL && (key == null || v.canonical())) {
                    key = v.pattern().path();
                    reason = verdict.reason();
                }
            }
            if (key == null && c.ifDirectory == null && c.pattern.absolute && asked(c, r.classify(c.pattern, c.access)).tier() == Tier.APPROVAL) {
                key = c.pattern.path();
                reason = asked(c, r.classify(c.pattern, c.access)).reason();
            }
            if (key != null) {
                approvals.putIfAbsent(key, reason);
            }
        }
        unresolved.forEach(approvals::putIfAbsent);
        approveAll(approvals, route, operation);
    }

    private void approveAll(Map<String, String> approvals, String route, String operation) {
        for (Map.Entry<String, String> a : approvals.entrySet()) {
            gate.approve(a.getKey(), route, operation, a.getValue() + " needs a human's approval");
        }
    }

    /** A mention's verdict: what would be denied or approved as a write is asked about. */
    private static ProtectedPaths.Verdict asked(Candidate c, ProtectedPaths.Verdict v) {
        if (!c.mention || v.tier() == Tier.FREE) {
            return v;
        }
        return ProtectedPaths.Verdict.approval(v.reason() + " named by " + c.via + ", which may write it,");
    }

    /** Applies hard-deny, hardline and safe roots to one form of a path; returns its verdict. */
    private ProtectedPaths.Verdict checkVariant(ProtectedPaths r, Candidate c, PathPattern p, char kind, String route) {
        if (c.mention) {
            return asked(c, r.classify(p, c.access));
        }
        if (c.access == Access.TREE && kind != 'C' && kind != 'R' && kind != 'G') {
            String why = CommandReader.treeHardline(p);
            if (why != null) {
                String text = c.via + " of " + why;
                Map<String, Object> fields = new LinkedHashMap<>();
                fields.put("route", route);
                fields.put("tier", "hardline");
                fields.put("reason", text);
                reporter.report("denied", c.shown, fields);
                throw new DeniedException((route.equals("exec") ? "Command" : "Write") + " denied: " + oneLine(text)
                        + " is a hardline command; nothing unlocks it.");
            }
        }
        ProtectedPaths.Verdict v = r.classify(p, c.access);
        if (v.tier() == Tier.HARD) {
            String resolved = kind == 'S' || p.path().equals(c.shown) ? "" : " (it resolves to '" + oneLine(p.path()) + "')";
            String what = switch (v.denial()) {
                case DEVICE -> "' is a device; only sinks such as /dev/null, /dev/stdout and /dev/stderr may be written";
                case READ_ONLY_IN_SANDBOX -> "' is " + v.reason();
                case PROTECTED -> "' is a protected system/credential file";
            };
            throw deny(c, route, v.reason(), "Write denied: '" + oneLine(c.shown) + what + "." + resolved);
        }
        boolean effective = kind == 'S' || kind == 'C' || kind == 'P' || kind == 'R' || kind == 'G';
        if (effective && !r.insideSafeRoots(p)) {
            throw deny(c, route, "outside safe roots", "Write denied: '" + oneLine(c.shown) + "' is outside the safe roots ("
                    + SAFE_ROOTS_KEY + ")" + (kind == 'S' ? "" : "; it resolves to '" + oneLine(p.path()) + "'") + ".");
        }
        return v;
    }

    private DeniedException deny(Candidate c, String route, String why, String message) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("route", route);
        fields.put("tier", "hard");
        fields.put("reason", why);
        fields.put("via", c.via);
        reporter.report("denied", c.shown, fields);
        return new DeniedException(message);
    }

    // ---------------------------------------------------------------- the protected homes

    private String realHome() {
        return containment.realHome();
    }

    /** The profile home: {@code $AIRLOCK_HOME/home} of the target, whether or not children use it. */
    private String profileHome() {
        return targetAirlockHome() + "/home";
    }

    private String targetAirlockHome() {
        return containment.airlockHome();
    }

    private ProtectedPaths rules() {
        ProtectedPaths r = rules;
        if (r != null) {
            return r;
        }
        synchronized (rulesLock) {
            if (rules == null) {
                try {
                    rules = loadRules();
                } catch (IOException e) {
                    throw new DeniedException("Write denied: cannot read the protected homes on the " + backend
                            + " target (" + oneLine(e.getMessage()) + "); nothing is written until they can be checked.");
                }
            }
            return rules;
        }
    }

    private ProtectedPaths loadRules() throws IOException {
        Map<Character, Set<String>> spelled = new LinkedHashMap<>();
        for (char tag : new char[] {'h', 'e', 'a', 'f', 's', 'x'}) {
            spelled.put(tag, new LinkedHashSet<>());
        }
        spelled.get('h').addAll(List.of(target.processHome(), target.passwdHome(), target.home(), profileHome(), realHome()));
        spelled.get('e').add("/etc");
        spelled.get('a').addAll(List.of(targetAirlockHome(), localAirlockHome.toAbsolutePath().toString()));
        settings.configFile().ifPresent(f -> spelled.get('f').add(f.toString()));
        for (String root : settings.getList(SAFE_ROOTS_KEY)) {
            spelled.get('s').add(target.expand(root.trim()));
        }
        spelled.get('x').add(target.privateDir());
        // Airlock's own set-up writes its shims there when the environment opens: safe roots limit the agent, not Airlock
        containment.shimDir().ifPresent(spelled.get('x')::add);
        Map<Character, Set<String>> all = new LinkedHashMap<>();
        spelled.forEach((k, v) -> all.put(k, new LinkedHashSet<>(v)));
        String out = canonicalForms(spelled);
        for (String rec : out.split("\0")) {
            if (rec.length() > 2 && rec.charAt(1) == '\t' && all.containsKey(rec.charAt(0))) {
                all.get(rec.charAt(0)).add(rec.substring(2));
            }
        }
        return new ProtectedPaths(all.get('h'), all.get('e'), all.get('a'), all.get('f'), all.get('s'), all.get('x'),
                credentialsReadOnly);
    }

    /**
     * The records ({@code TAG TAB PATH NUL}) of each spelled path's canonical form on the target,
     * and the children's {@code $AIRLOCK_REAL_HOME} there, spelled and canonical: in this JVM where
     * the shell offers the host's paths, else by a script.
     */
    private String canonicalForms(Map<Character, Set<String>> spelled) throws IOException {
        Optional<HostPaths> host = shell.hostPaths();
        if (host.isPresent()) {
            try {
                StringBuilder out = new StringBuilder();
                Optional<String> real = host.get().variable("AIRLOCK_REAL_HOME").filter(v -> !v.isEmpty());
                if (real.isPresent()) {
                    out.append("h\t").append(real.get()).append('\0');
                    out.append("h\t").append(host.get().canon(host.get().abs(real.get()))).append('\0');
                }
                for (Map.Entry<Character, Set<String>> e : spelled.entrySet()) {
                    for (String p : e.getValue()) {
                        if (p != null && p.startsWith("/") && p.indexOf('\0') < 0) {
                            out.append(e.getKey()).append('\t').append(host.get().canon(p)).append('\0');
                        }
                    }
                }
                return out.toString();
            } catch (HostPaths.Unanswerable e) {
                // the script sees what Java cannot: it answers
            }
        }
        StringBuilder s = new StringBuilder("set +f\n").append(TargetResolver.FUNCTIONS);
        s.append("if [ -n \"${AIRLOCK_REAL_HOME:-}\" ]; then printf 'h\\t%s\\0' \"$AIRLOCK_REAL_HOME\";"
                + " abs \"$AIRLOCK_REAL_HOME\"; printf 'h\\t'; canon \"$a\"; printf '\\0'; fi\n");
        for (Map.Entry<Character, Set<String>> e : spelled.entrySet()) {
            for (String p : e.getValue()) {
                if (p == null || !p.startsWith("/") || p.indexOf('\0') >= 0) {
                    continue;
                }
                s.append("printf '").append(e.getKey()).append("\\t'; canon ").append(Shell.quote(p)).append("; printf '\\0'\n");
            }
        }
        s.append("exit 0\n");
        return new String(shell.run(s.toString()), StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- text

    private static String neutralise(String path) {
        StringBuilder b = new StringBuilder(path.length());
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            b.append(Marks.isMark(c) ? Marks.UNKNOWN : c);
        }
        return b.toString();
    }

    /** A value safe to show on one line: control and invisible characters as '?', at most 300 characters. */
    static String oneLine(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(Math.min(s.length(), 300));
        for (int i = 0; i < s.length() && b.length() < 300; i++) {
            char c = s.charAt(i);
            boolean control = c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || (c >= '\u200b' && c <= '\u200f')
                    || (c >= '\u202a' && c <= '\u202e') || (c >= '\u2066' && c <= '\u2069') || Marks.isMark(c);
            b.append(control ? '?' : c);
        }
        if (s.length() > 300) {
            b.append("...");
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return "Safety[" + backend.toLowerCase(Locale.ROOT) + ", guard " + guard.describe() + "]";
    }
}
