package dev.airlock.containment;

import dev.airlock.BackendException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Target;
import dev.airlock.containment.DoctorReport.Row;
import dev.airlock.containment.DoctorReport.Verdict;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.AbstractEnvironment;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code airlock doctor}: counts the exits a run could leak through (HOME, crontab, the user bus,
 * TMPDIR, argv, sockets) by running one read-only {@code sh} script through the environment, so
 * it sees exactly what a command sees, on any backend. It never writes to the real crontab or
 * talks to the bus to find out.
 *
 * <p>Usage: {@code DoctorReport r = Doctor.report(env); System.out.print(json ? r.toJson() : r.toText()); exit(r.exitCode());}
 */
public final class Doctor {
    private static final String MARKER_VARIABLE = "AIRLOCK_DOCTOR_MARKER";

    private Doctor() {
    }

    /** Probes {@code env} and judges every exit. */
    public static DoctorReport report(Environment env) {
        String stdinMarker = "airlock-doctor-" + StdinScripts.randomToken();
        String envMarker = "airlock-doctor-" + StdinScripts.randomToken();
        ExecResult r = env.exec(ExecRequest.builder(script())
                .stdin((stdinMarker + "\n").getBytes(StandardCharsets.UTF_8))
                .env(MARKER_VARIABLE, envMarker)
                .env("AIRLOCK_DOCTOR_SHARED_TMP", env.target().tempDir())
                .timeout(Duration.ofSeconds(60))
                .build());
        if (r.exitCode() != 0) {
            String err = r.stderr().text().strip();
            int nl = err.indexOf('\n');
            throw new BackendException("the doctor probe failed on the " + env.name() + " backend (exit " + r.exitCode()
                    + ")" + (err.isEmpty() ? "" : ": " + (nl < 0 ? err : err.substring(0, nl))));
        }
        Optional<Containment> plan = Optional.empty();
        String guard = "unknown";
        String isolation = "unknown";
        if (env instanceof AbstractEnvironment ae) {
            plan = Optional.of(ae.containment());
            guard = ae.commandGuard().describe();
            isolation = ae.isolation();
        }
        DoctorReport report = judge(env.name(), env.target(), plan, guard, isolation, parse(r.stdout().bytes()));
        return env instanceof AbstractEnvironment ae ? report.withRow(secretVariables(ae.strippedSecretVariables())) : report;
    }

    /** The secret variables no child inherits, by name only (never a value). */
    static Row secretVariables(Set<String> stripped) {
        return stripped.isEmpty()
                ? new Row("secret variables", Verdict.NOT_APPLICABLE, "no secret-looking variable in Airlock's environment")
                : new Row("secret variables", Verdict.CONTAINED_BY_ENVIRONMENT, "removed from every child: "
                + String.join(", ", stripped) + " (pass one on purpose with " + SecretVariables.PASS_KEY + ")");
    }

    /** The probe script (read-only POSIX {@code sh}). */
    public static String script() {
        try (InputStream in = Doctor.class.getResourceAsStream("doctor.sh")) {
            if (in == null) {
                throw new IllegalStateException("doctor.sh is missing from airlock-core's resources");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("reading doctor.sh", e);
        }
    }

    /** Parses the probe's NUL-separated {@code key=value} records. */
    static Map<String, String> parse(byte[] out) {
        Map<String, String> facts = new LinkedHashMap<>();
        for (String rec : new String(out, StandardCharsets.UTF_8).split("\0")) {
            int eq = rec.indexOf('=');
            if (eq > 0) {
                facts.put(rec.substring(0, eq), rec.substring(eq + 1));
            }
        }
        if (!facts.containsKey("uid")) {
            throw new BackendException("the doctor probe returned no usable facts; is POSIX sh available on the target?");
        }
        return facts;
    }

    /** Turns the probe's facts into the report; pure, so every rule is testable without a target. */
    static DoctorReport judge(String backend, Target target, Optional<Containment> plan, String commandGuard,
                              String isolation, Map<String, String> f) {
        List<Row> rows = new ArrayList<>();
        rows.add(home(target, plan, f));
        rows.add(crontab(f));
        rows.add(bus(f));
        rows.add(tmpdir(target, plan, f));
        rows.add(argv(f));
        rows.add(sockets(f));
        return new DoctorReport(backend, target.user() + "@" + target.hostname(), target.uid(), target.container(),
                target.containerSignal(), plan.map(p -> p.homeMode().name().toLowerCase(java.util.Locale.ROOT)).orElse("unknown"),
                plan.map(p -> p.profile().label()).orElse("unknown"), plan.flatMap(Containment::runDir), commandGuard,
                isolation, rows);
    }

    private static Row home(Target target, Optional<Containment> plan, Map<String, String> f) {
        String home = strip(f.getOrDefault("home", ""));
        String real = strip(f.getOrDefault("real_home", ""));
        if (real.isEmpty()) {
            real = strip(target.processHome().isEmpty() ? target.passwdHome() : target.processHome());
        }
        // Under a sandbox a real home below its own tmpfs (a fresh /tmp, say) is not the real one either.
        boolean realReadOnly = "1".equals(f.get("real_home_ro")) || (sandboxed(f) && "tmpfs".equals(f.get("real_home_fs")));
        String why = plan.map(Containment::homeReason)
                .orElse("container: " + (target.container() ? "yes" : "no") + ", " + target.containerSignal());
        if (home.isEmpty()) {
            return new Row("HOME", Verdict.LEAKS, "HOME is unset, so programs fall back to the real home " + real);
        }
        if (home.equals(real)) {
            return realReadOnly
                    ? new Row("HOME", Verdict.CONTAINED_ENFORCED, "HOME is the real home " + real + ", read-only here (" + why + ")")
                    : new Row("HOME", Verdict.LEAKS, "HOME is the real home " + real + " (" + why + ")");
        }
        return realReadOnly
                ? new Row("HOME", Verdict.CONTAINED_ENFORCED, "HOME=" + home + " (" + why + "); the real home " + real
                        + " is read-only or hidden here")
                : new Row("HOME", Verdict.CONTAINED_BY_ENVIRONMENT, "HOME=" + home + " (" + why + "); the real home " + real
                        + " stays writable by absolute path");
    }

    private static Row crontab(Map<String, String> f) {
        String onPath = f.getOrDefault("crontab", "");
        boolean shim = "1".equals(f.get("crontab_shim"));
        String real = f.getOrDefault("crontab_real", "");
        String spool = f.getOrDefault("spool", "");
        boolean spoolReadOnly = !spool.isEmpty() && "1".equals(f.get("spool_ro"));
        if (shim) {
            if (spoolReadOnly) {
                return new Row("crontab", Verdict.CONTAINED_ENFORCED, "crontab resolves to the shim " + onPath
                        + "; the spool " + spool + " is read-only here");
            }
            return new Row("crontab", Verdict.CONTAINED_BY_ENVIRONMENT, "crontab resolves to the shim " + onPath
                    + (real.isEmpty() ? "; no other crontab is installed"
                    : "; " + real + " still writes " + (spool.isEmpty() ? "the spool" : spool) + " when called by absolute path"));
        }
        if (!onPath.isEmpty()) {
            if (spoolReadOnly) {
                return new Row("crontab", Verdict.CONTAINED_ENFORCED, "crontab is " + onPath + ", but the spool " + spool
                        + " is read-only here");
            }
            return new Row("crontab", Verdict.LEAKS, "crontab is " + onPath + ", which installs jobs in the real table"
                    + (spool.isEmpty() ? "" : " (" + spool + ")"));
        }
        if (!real.isEmpty()) {
            return new Row("crontab", spoolReadOnly ? Verdict.CONTAINED_ENFORCED : Verdict.CONTAINED_BY_ENVIRONMENT,
                    "no crontab on PATH; " + real + " exists by absolute path" + (spoolReadOnly ? ", its spool read-only here" : ""));
        }
        return new Row("crontab", Verdict.NOT_APPLICABLE, "no crontab on the target");
    }

    private static Row bus(Map<String, String> f) {
        String address = f.getOrDefault("dbus", "");
        String runtime = f.getOrDefault("xdg_runtime", "");
        String socket = f.getOrDefault("bus_socket", "");
        String systemctl = f.getOrDefault("systemctl", "");
        String shimNote = "1".equals(f.get("systemctl_shim")) ? "; systemctl resolves to the shim " + systemctl : "";
        if (!address.isEmpty()) {
            return new Row("user bus", Verdict.LEAKS, "DBUS_SESSION_BUS_ADDRESS=" + address + " reaches the session bus" + shimNote);
        }
        if (!runtime.isEmpty() && !socket.isEmpty() && socket.startsWith(runtime)) {
            return new Row("user bus", Verdict.LEAKS, "XDG_RUNTIME_DIR=" + runtime + " leads to the bus socket " + socket + shimNote);
        }
        if (!socket.isEmpty()) {
            return "1".equals(f.get("bus_socket_w"))
                    ? new Row("user bus", Verdict.CONTAINED_BY_ENVIRONMENT, "the bus variables are removed; the socket "
                            + socket + " stays reachable by path" + shimNote)
                    : new Row("user bus", Verdict.CONTAINED_ENFORCED, "the bus socket " + socket + " is not writable here" + shimNote);
        }
        if (freshRun(f)) {
            return new Row("user bus", Verdict.CONTAINED_ENFORCED, "no bus variable and no bus socket: / is read-only"
                    + " and /run is this sandbox's own" + shimNote);
        }
        return new Row("user bus", Verdict.NOT_APPLICABLE, "no user bus here (no DBUS_SESSION_BUS_ADDRESS, no bus socket"
                + (runtime.isEmpty() ? ", no XDG_RUNTIME_DIR" : " in " + runtime) + ")" + shimNote);
    }

    private static Row tmpdir(Target target, Optional<Containment> plan, Map<String, String> f) {
        String tmp = strip(f.getOrDefault("tmpdir", ""));
        Set<String> shared = new HashSet<>(List.of("/tmp", "/var/tmp", "/dev/shm", strip(target.tempDir())));
        if (tmp.isEmpty()) {
            return new Row("TMPDIR", Verdict.LEAKS, "TMPDIR is unset, so programs use the shared /tmp");
        }
        if (shared.contains(tmp)) {
            return new Row("TMPDIR", Verdict.LEAKS, "TMPDIR=" + tmp + " is the shared temp dir");
        }
        String mode = f.getOrDefault("tmpdir_mode", "");
        String where = plan.flatMap(Containment::runDir).filter(d -> tmp.startsWith(d + "/")).isPresent()
                ? "in the run dir" : tmp.startsWith(strip(target.privateDir()) + "/") ? "removed on close" : "set by the caller";
        String what = "TMPDIR=" + tmp + " (" + (mode.isEmpty() ? "" : "mode " + mode + ", ") + where + ")";
        if ("1".equals(f.get("tmp_ro"))) {
            return new Row("TMPDIR", Verdict.CONTAINED_ENFORCED, what + "; the shared /tmp is read-only here");
        }
        boolean sharedFresh = strip(target.tempDir()).equals("/tmp") || "1".equals(f.get("shared_tmp_ro"))
                || (sandboxed(f) && "tmpfs".equals(f.get("shared_tmp_fs")));
        if (sandboxed(f) && "tmpfs".equals(f.get("tmp_fs")) && sharedFresh) {
            return new Row("TMPDIR", Verdict.CONTAINED_ENFORCED, what + "; / is read-only and the shared temp dir is this"
                    + " sandbox's own tmpfs");
        }
        return new Row("TMPDIR", Verdict.CONTAINED_BY_ENVIRONMENT, what + "; the shared /tmp stays writable by absolute path");
    }

    private static Row argv(Map<String, String> f) {
        String procs = f.getOrDefault("procs", "");
        if (procs.isEmpty()) {
            return new Row("argv secrecy", Verdict.NOT_APPLICABLE, "no /proc on the target to look at other processes' argv");
        }
        String hits = f.getOrDefault("argv_hits", "0").trim();
        if (!hits.equals("0")) {
            return new Row("argv secrecy", Verdict.LEAKS, "a marker sent as stdin or as an env value showed up in the argv of "
                    + hits + " process(es)");
        }
        return new Row("argv secrecy", Verdict.CONTAINED_BY_ENVIRONMENT, "markers sent as stdin and as an env value were in"
                + " none of " + procs + " processes' argv; the command's own arguments stay visible to every local user");
    }

    private static Row sockets(Map<String, String> f) {
        String reachable = f.getOrDefault("sockets", "").trim();
        if (!reachable.isEmpty()) {
            return new Row("sockets", Verdict.LEAKS, "reachable host sockets: " + String.join(", ", reachable.split(" ")));
        }
        if (freshRun(f)) {
            return new Row("sockets", Verdict.CONTAINED_ENFORCED, "no host socket is reachable: / is read-only and /run is"
                    + " this sandbox's own");
        }
        return new Row("sockets", Verdict.NOT_APPLICABLE, "none of the usual host sockets (Docker, containerd, podman,"
                + " the buses, an SSH agent) is here");
    }

    /** A read-only root: the sign of a sandbox that made its own /tmp and /run. */
    private static boolean sandboxed(Map<String, String> f) {
        return "1".equals(f.get("root_ro"));
    }

    private static boolean freshRun(Map<String, String> f) {
        return sandboxed(f) && "tmpfs".equals(f.get("run_fs"));
    }

    private static String strip(String path) {
        String p = path;
        while (p.length() > 1 && p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p;
    }
}
