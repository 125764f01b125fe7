package dev.airlock.containment;

import dev.airlock.BackendException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Target;
import dev.airlock.containment.DoctorReport.Row;
import dev.airlock.containment.DoctorReport.Verdict;
import dev.airlock.settings.Settings;
import dev.airlock.shell.StdinScripts;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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

    /** Probes {@code env} and judges every exit; Airlock's own state is looked for where the process environment says. */
    public static DoctorReport report(Environment env) {
        return report(env, Settings.empty());
    }

    /**
     * Probes {@code env} and judges every exit.
     *
     * @param settings the settings {@code env} was opened with: where Airlock's config and approvals are
     */
    public static DoctorReport report(Environment env, Settings settings) {
        String stdinMarker = "airlock-doctor-" + StdinScripts.randomToken();
        String envMarker = "airlock-doctor-" + StdinScripts.randomToken();
        String siblingMarker = "airlock-doctor-sibling-" + StdinScripts.randomToken();
        String siblingIn = "airlock-doctor-stdin-" + StdinScripts.randomToken();
        String survivorMarker = "airlock-doctor-survivor-" + StdinScripts.randomToken();
        // Another exec running alongside: the probe looks for its processes and its stdin.
        CountDownLatch running = new CountDownLatch(1);
        OutputStream ready = new OutputStream() {
            @Override
            public void write(int b) {
                running.countDown();
            }

            @Override
            public void write(byte[] b, int off, int len) {
                running.countDown();
            }
        };
        Execution sibling = env.start(ExecRequest.builder("printf r; sh -c 'sleep 120; :' " + siblingMarker)
                .stdin((siblingIn + "\n").getBytes(StandardCharsets.UTF_8)).output(ready, OutputStream.nullOutputStream())
                .timeout(Duration.ofSeconds(120)).build());
        ExecResult r;
        Map<String, String> facts;
        // Under an allowlist, a server no list names (this JVM's, on its loopback): the probe says whether it answered.
        UnlistedServer unlisted = dev.airlock.NetworkMode.from(settings) == dev.airlock.NetworkMode.ALLOWLIST
                ? UnlistedServer.start() : null;
        try {
            try {
                running.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ExecRequest.Builder probe = ExecRequest.builder(script())
                    .stdin((stdinMarker + "\n").getBytes(StandardCharsets.UTF_8))
                    .env(MARKER_VARIABLE, envMarker)
                    .env("AIRLOCK_DOCTOR_SHARED_TMP", env.target().tempDir())
                    .env("AIRLOCK_DOCTOR_JVM_PID", Long.toString(ProcessHandle.current().pid()))
                    .env("AIRLOCK_DOCTOR_SIBLING", siblingMarker)
                    .env("AIRLOCK_DOCTOR_SIBLING_IN", siblingIn)
                    .env("AIRLOCK_DOCTOR_SURVIVOR", survivorMarker)
                    .timeout(Duration.ofSeconds(60));
            if ("local".equals(env.name())) {
                // Airlock's own files are on the JVM's host: only a local command reaches them by these paths.
                List<String> own = new ArrayList<>();
                OwnState.stateFiles(settings).keySet().forEach(f -> own.add(stateLine(f)));
                OwnState.programFiles().forEach(f -> own.add(stateLine(f)));
                own.removeIf(String::isEmpty);
                probe.env("AIRLOCK_DOCTOR_STATE", String.join("\n", own));
            }
            if (unlisted != null) {
                probe.env("AIRLOCK_DOCTOR_UNLISTED_PORT", Integer.toString(unlisted.port()));
            }
            r = env.exec(probe.build());
            if (r.exitCode() != 0) {
                String err = r.stderr().text().strip();
                int nl = err.indexOf('\n');
                throw new BackendException("the doctor probe failed on the " + env.name() + " backend (exit " + r.exitCode()
                        + ")" + (err.isEmpty() ? "" : ": " + (nl < 0 ? err : err.substring(0, nl))));
            }
            facts = new LinkedHashMap<>(parse(r.stdout().bytes()));
            if (unlisted != null) {
                facts.put("unlisted_port", Integer.toString(unlisted.port()));
            }
        } finally {
            sibling.cancel();
            if (unlisted != null) {
                unlisted.close();
            }
        }
        facts.put("network_asked", dev.airlock.NetworkMode.from(settings).label()); // judged against what the probe found
        facts.remove(DoctorRules.ALLOWLIST_CHECKED); // never the probe's to say (a command could print it)
        if (env instanceof ContainedEnvironment ae) {
            ae.allowlistCheck().ifPresent(c -> facts.put(DoctorRules.ALLOWLIST_CHECKED, c));
        }
        if ("1".equals(facts.get("survivor_started"))) {
            facts.put("survivors", Integer.toString(killSurvivors(env, survivorMarker)));
        }
        Optional<Containment> plan = Optional.empty();
        String guard = "unknown";
        String isolation = "unknown";
        if (env instanceof ContainedEnvironment ae) {
            plan = Optional.of(ae.containment());
            guard = ae.commandGuard().describe();
            isolation = ae.isolation();
        }
        DoctorReport report = judge(env.name(), env.target(), plan, guard, isolation, facts);
        return env instanceof ContainedEnvironment ae ? report.withRow(secretVariables(ae.strippedSecretVariables())) : report;
    }

    /** A server on this JVM's loopback that no allowlist names, answering {@code airlock-doctor-unlisted} until closed. */
    private record UnlistedServer(java.net.ServerSocket socket) implements AutoCloseable {
        static UnlistedServer start() {
            try {
                java.net.ServerSocket s = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
                Thread t = new Thread(() -> {
                    while (!s.isClosed()) {
                        try (java.net.Socket c = s.accept()) {
                            c.getOutputStream().write("airlock-doctor-unlisted\n".getBytes(StandardCharsets.UTF_8));
                        } catch (IOException e) {
                            // closed, or a client gone: nothing to answer
                        }
                    }
                }, "airlock-doctor-unlisted");
                t.setDaemon(true);
                t.start();
                return new UnlistedServer(s);
            } catch (IOException e) {
                throw new UncheckedIOException("the doctor cannot listen on this machine's loopback: " + e.getMessage(), e);
            }
        }

        int port() {
            return socket.getLocalPort();
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // a listening socket: nothing more to free
            }
        }
    }

    /**
     * One of Airlock's files for the probe: {@code PATH<TAB>DIR<TAB>INODE}, DIR being the nearest
     * part of it that exists on the host and INODE its inode there, so a command that sees another
     * file system at DIR (a sandbox's own /tmp) is not taken for one that reaches the host's.
     */
    private static String stateLine(java.nio.file.Path f) {
        java.nio.file.Path d = f;
        while (d != null && !java.nio.file.Files.exists(d)) {
            d = d.getParent();
        }
        if (d == null || f.toString().indexOf('\n') >= 0 || f.toString().indexOf('\t') >= 0) {
            return "";
        }
        try {
            return f + "\t" + d + "\t" + java.nio.file.Files.getAttribute(d, "unix:ino");
        } catch (IOException | UnsupportedOperationException e) {
            return "";
        }
    }

    /** Finds the probe's {@code setsid} job after the probe ended (the marker is in its argv), kills it, counts it. */
    private static int killSurvivors(Environment env, String marker) {
        String find = "n=0; for f in $(grep -F -l -f - /proc/[0-9]*/cmdline 2>/dev/null); do p=${f#/proc/}; p=${p%/cmdline};"
                + " kill -9 \"$p\" 2>/dev/null && n=$((n+1)); done; echo $n";
        ExecResult r = env.exec(ExecRequest.builder(find).stdin((marker + "\n").getBytes(StandardCharsets.UTF_8))
                .timeout(Duration.ofSeconds(30)).build());
        try {
            return Integer.parseInt(r.stdout().text().trim());
        } catch (NumberFormatException e) {
            return 0;
        }
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

    /** Turns the probe's facts into the report (the rules live in {@link DoctorRules}). */
    static DoctorReport judge(String backend, Target target, Optional<Containment> plan, String commandGuard,
                              String isolation, Map<String, String> f) {
        return DoctorRules.judge(backend, target, plan, commandGuard, isolation, f);
    }
}
