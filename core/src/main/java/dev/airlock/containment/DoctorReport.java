package dev.airlock.containment;

import dev.airlock.internal.Json;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code airlock doctor} found: one row per exit a run could leak through, each with a
 * verdict and the evidence for it, plus the facts that decided (the container signal, the home
 * mode, the profile).
 *
 * @param backend         the backend's name
 * @param target          {@code user@host} of the target
 * @param uid             the target user's uid
 * @param container       whether the target was judged a container
 * @param containerSignal what decided that
 * @param homeMode        the configured home mode, or "unknown" for a backend that does not say
 * @param profile         the containment profile, or "unknown"
 * @param runDir          the eval profile's run dir
 * @param commandGuard    whether the command guard is in force and why, or "unknown"
 * @param isolation       how the backend isolates commands beyond their environment ("none" and why)
 * @param rows            one per exit, in a fixed order
 */
public record DoctorReport(String backend, String target, int uid, boolean container, String containerSignal,
                           String homeMode, String profile, Optional<String> runDir, String commandGuard,
                           String isolation, List<Row> rows) {
    /** The process exit status of {@code airlock doctor} when an exit leaks. */
    public static final int EXIT_LEAKS = 5;

    /** The clause of the isolation text that lists what a command can write, one path a line in the table. */
    private static final String WRITABLE = "writable: ";

    public DoctorReport {
        rows = List.copyOf(rows);
    }

    /** How an exit stands. */
    public enum Verdict {
        /** The kernel (a read-only mount, a namespace) stops the leak whatever the child does. */
        CONTAINED_ENFORCED("contained (enforced)", "enforced"),
        /**
         * The child's environment (HOME, TMPDIR, PATH, removed variables) keeps it in only if it
         * cooperates: an honest command stays in, a hostile one can leave, so it is never called contained.
         */
        CONTAINED_BY_ENVIRONMENT("steered (not enforced)", "environment"),
        /** A child doing the ordinary thing reaches the real resource. */
        LEAKS("LEAKS", "leaks"),
        /** The resource does not exist on the target, or could not be checked. */
        NOT_APPLICABLE("n/a", "n/a");

        private final String label;
        private final String code;

        Verdict(String label, String code) {
            this.label = label;
            this.code = code;
        }

        public String label() {
            return label;
        }

        /** A short stable word for JSON consumers. */
        public String code() {
            return code;
        }
    }

    /**
     * @param exit     what could leak ("HOME", "crontab", "user bus", "TMPDIR", "argv secrecy", "sockets")
     * @param verdict  how it stands
     * @param evidence what was seen, in one line
     */
    public record Row(String exit, Verdict verdict, String evidence) {
    }

    /** This report with one more row at the end. */
    public DoctorReport withRow(Row row) {
        List<Row> more = new ArrayList<>(rows);
        more.add(row);
        return new DoctorReport(backend, target, uid, container, containerSignal, homeMode, profile, runDir, commandGuard,
                isolation, more);
    }

    public boolean leaks() {
        return rows.stream().anyMatch(r -> r.verdict() == Verdict.LEAKS);
    }

    /** 0 when nothing leaks, {@value #EXIT_LEAKS} when something does. */
    public int exitCode() {
        return leaks() ? EXIT_LEAKS : 0;
    }

    public Optional<Row> row(String exit) {
        return rows.stream().filter(r -> r.exit().equalsIgnoreCase(exit)).findFirst();
    }

    /** The table for a terminal. */
    public String toText() {
        StringBuilder sb = new StringBuilder();
        sb.append("airlock doctor: ").append(backend).append(" backend, ").append(target).append(" (uid ").append(uid).append(")\n");
        sb.append("container: ").append(container ? "yes" : "no").append(" (").append(containerSignal).append("); home mode: ")
                .append(homeMode).append("; profile: ").append(profile);
        runDir.ifPresent(d -> sb.append(" (run dir ").append(d).append(')'));
        sb.append("\ncommand guard: ").append(commandGuard).append("\nisolation: ");
        List<String> clauses = clauses(isolation);
        sb.append(clauses.get(0)).append('\n');
        for (String clause : clauses.subList(1, clauses.size())) {
            if (clause.startsWith(WRITABLE)) {
                sb.append("  ").append(WRITABLE.strip()).append('\n');
                Arrays.stream(clause.substring(WRITABLE.length()).split(", ")).forEach(path -> sb.append("    ").append(path).append('\n'));
            } else {
                sb.append("  ").append(clause).append('\n');
            }
        }
        sb.append('\n');
        int w1 = "EXIT".length();
        int w2 = "VERDICT".length();
        for (Row r : rows) {
            w1 = Math.max(w1, r.exit().length());
            w2 = Math.max(w2, r.verdict().label().length());
        }
        String fmt = "%-" + w1 + "s  %-" + w2 + "s  %s%n";
        sb.append(String.format(Locale.ROOT, fmt, "EXIT", "VERDICT", "EVIDENCE"));
        String continued = " ".repeat(w1 + 2 + w2 + 2);
        for (Row r : rows) {
            List<String> evidence = clauses(r.evidence());
            sb.append(String.format(Locale.ROOT, fmt, r.exit(), r.verdict().label(), evidence.get(0)));
            evidence.subList(1, evidence.size()).forEach(clause -> sb.append(continued).append(clause).append('\n'));
        }
        long leaking = rows.stream().filter(r -> r.verdict() == Verdict.LEAKS).count();
        long steered = rows.stream().filter(r -> r.verdict() == Verdict.CONTAINED_BY_ENVIRONMENT).count();
        sb.append('\n').append(leaking == 0 ? "nothing leaks" : leaking + " of " + rows.size() + " exits leak")
                .append(" (exit status ").append(exitCode()).append(")\n");
        if (steered > 0) {
            sb.append(steered).append(" of ").append(rows.size()).append(" exits are steered, not enforced:"
                    + " a command that ignores its environment can take them\n");
        }
        return sb.toString();
    }

    /** The clauses of a long evidence or isolation text, one a line in the table, so each path reads on a line of its own. */
    private static List<String> clauses(String text) {
        return List.of(text.split("; "));
    }

    /** The report as one JSON object (for {@code doctor --json}). */
    public String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("backend", backend);
        m.put("target", target);
        m.put("uid", uid);
        m.put("container", container);
        m.put("containerSignal", containerSignal);
        m.put("homeMode", homeMode);
        m.put("profile", profile);
        m.put("runDir", runDir.orElse(null));
        m.put("commandGuard", commandGuard);
        m.put("isolation", isolation);
        m.put("leaks", leaks());
        m.put("exitCode", exitCode());
        List<Object> list = new ArrayList<>();
        for (Row r : rows) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("exit", r.exit());
            o.put("verdict", r.verdict().label());
            o.put("code", r.verdict().code());
            o.put("evidence", r.evidence());
            list.add(o);
        }
        m.put("rows", list);
        return Json.write(m);
    }
}
