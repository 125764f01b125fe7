package dev.airlock.bench;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.settings.Settings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The scenarios per backend: each adds its rows and its growth points. */
final class Scenarios {
    private static final long MIB = 1L << 20;

    final Plan plan;
    final Path work;
    final List<Row> rows = new ArrayList<>();
    /** "BACKEND stdin|stdout" to MiB to {Airlock, reference} medians; "BACKEND exec" to concurrency. */
    final Map<String, Map<Integer, double[]>> growth = new LinkedHashMap<>();
    final Map<String, String> references = new LinkedHashMap<>();

    Scenarios(Plan plan, Path work) {
        this.plan = plan;
        this.work = work;
    }

    void local() throws Exception {
        references.put("local", "ProcessBuilder");
        try (Environment env = Environments.open(Settings.of("airlock.backend", "local"))) {
            Transfers.Reference pb = new Transfers.Reference("`ProcessBuilder` `bash -c` in this JVM",
                    c -> List.of("bash", "-c", c), false);
            rows.addAll(Transfers.rows("local", env, pb, plan, growth, "3", 1.05, "3", 1.05));
            rows.add(sessionCost(env));
            rows.add(write(env));
            rows.add(atomicWrite(env));
            Side a = () -> execTrue(env);
            Side r = () -> Meter.program(List.of("bash", "-c", "true"), null, false);
            Sample[] s = Concurrency.measure("local exec", a, r, plan, growth);
            rows.add(percentile("local", s, 50, "`ProcessBuilder` `bash -c true`, 64 threads at once"));
            rows.add(percentile("local", s, 99, "`ProcessBuilder` `bash -c true`, 64 threads at once"));
        }
        memory("local", Map.of("airlock.backend", "local"));
    }

    /**
     * The same 256 MiB stdout against {@code ProcessBuilder} running {@code setsid bash -c}: a new
     * session, as every Airlock command gets, puts the command in its own scheduler autogroup
     * (kernel.sched_autogroup_enabled), which on a loaded host slows the pipe by itself.
     */
    private Row sessionCost(Environment env) {
        long bytes = Plan.MAIN_MIB * MIB;
        Transfers.Reference setsid = new Transfers.Reference("`ProcessBuilder` `setsid bash -c` in this JVM",
                c -> List.of("setsid", "bash", "-c", c), false);
        Sample a = new Sample();
        Sample r = new Sample();
        Progress.say("local stdout 256 MiB against setsid bash -c");
        Meter.alternate(Transfers.airlockStdout(env, bytes), a, Transfers.referenceStdout(setsid, bytes), r, plan.warmup(), plan.reps());
        return new Row("3", "local 256 MiB stdout, reference also in a new session (`setsid`)",
                "Airlock `exec`, stdout streamed to a counting sink", setsid.how() + ", its stdout read and counted", a, r,
                "(diagnostic)", Double.NaN, "");
    }

    /** files().write of 256 MiB from a file against Files.copy of the same file, both replacing the target. */
    private Row write(Environment env) throws Exception {
        Path src = work.resolve("source-256");
        if (!Files.exists(src) || Files.size(src) != Plan.MAIN_MIB * MIB) {
            Files.copy(Streams.generated(Plan.MAIN_MIB * MIB), src, StandardCopyOption.REPLACE_EXISTING);
        }
        Path a = work.resolve("airlock-written");
        Path b = work.resolve("copied");
        Sample sa = new Sample();
        Sample sb = new Sample();
        Progress.say("local files().write 256 MiB");
        Meter.alternate(() -> {
            env.files().write(a.toString(), Payload.ofFile(src));
            Streams.expect(Plan.MAIN_MIB * MIB, Files.size(a), "written");
        }, sa, () -> Files.copy(src, b, StandardCopyOption.REPLACE_EXISTING), sb, plan.warmup(), plan.reps());
        Files.deleteIfExists(a);
        Files.deleteIfExists(b);
        return new Row("2", "local `files().write` 256 MiB (file to file)", "`files().write(path, Payload.ofFile(src))`, wall time",
                "`Files.copy(src, dst, REPLACE_EXISTING)`, wall time", sa, sb, "<= 1.2", 1.2, "");
    }

    /**
     * The same write against a reference with Airlock's semantics: copy to a temp sibling, then
     * rename it over the target, so a reader sees the old file or the new one, never a part. On
     * ext4 (auto_da_alloc) a rename over an existing file starts the new file's writeback at once,
     * which {@code Files.copy}'s unlink-then-write never pays; this row shows that price apart.
     */
    private Row atomicWrite(Environment env) throws Exception {
        Path src = work.resolve("source-256");
        Path a = work.resolve("airlock-written");
        Path b = work.resolve("renamed-over");
        Path tmp = work.resolve("renamed-over.tmp");
        Sample sa = new Sample();
        Sample sb = new Sample();
        Files.copy(src, a, StandardCopyOption.REPLACE_EXISTING);
        Files.copy(src, b, StandardCopyOption.REPLACE_EXISTING);
        Progress.say("local files().write 256 MiB against a copy renamed over the target");
        Meter.alternate(() -> {
            env.files().write(a.toString(), Payload.ofFile(src));
            Streams.expect(Plan.MAIN_MIB * MIB, Files.size(a), "written");
        }, sa, () -> {
            Files.copy(src, tmp, StandardCopyOption.REPLACE_EXISTING);
            Files.move(tmp, b, StandardCopyOption.ATOMIC_MOVE);
        }, sb, plan.warmup(), plan.reps());
        Files.deleteIfExists(a);
        Files.deleteIfExists(b);
        return new Row("2", "local `files().write` 256 MiB, reference also renamed over the target",
                "`files().write(path, Payload.ofFile(src))`, wall time",
                "`Files.copy(src, tmp)` then `Files.move(tmp, dst, ATOMIC_MOVE)` over an existing file, wall time", sa, sb,
                "(diagnostic)", Double.NaN, "");
    }

    private Row percentile(String backend, Sample[] s, int p, String how) {
        Sample a = fixed(s[0], s[0].percentile(p));
        Sample r = fixed(s[1], s[1].percentile(p));
        return new Row("8", backend + " 64 concurrent `exec true`, p" + p, "Airlock `exec`, 64 threads at once, each timed",
                how, a, r, "no failures", Double.NaN, "");
    }

    /** A sample standing for one statistic of another (its percentile), keeping failures and memory. */
    static Sample fixed(Sample from, double value) {
        Sample s = new Sample();
        if (!Double.isNaN(value)) {
            for (int i = 0; i < from.count(); i++) {
                s.add(value);
            }
        }
        for (int i = 0; i < from.failures(); i++) {
            s.failed(new RuntimeException(from.lastFailure()));
        }
        s.memory(from.heapPeak(), from.rssPeak());
        return s;
    }

    static void execTrue(Environment env) throws IOException {
        try (ExecResult r = env.exec(ExecRequest.of("true"))) {
            Transfers.check(r);
        }
    }

    void docker() throws Exception {
        String why = Services.whyNoDocker();
        if (why != null) {
            rows.add(Row.notMeasured("4", "docker", "<= 1.0", why));
            return;
        }
        references.put("docker", "docker CLI");
        String cid = Services.startContainer();
        try (Environment env = Environments.open(Settings.of("airlock.backend", "docker", "airlock.docker.container", cid))) {
            Transfers.Reference cli = new Transfers.Reference("`docker exec -i` (CLI) into the same container",
                    c -> List.of("docker", "exec", "-i", cid, "sh", "-c", c), true);
            rows.addAll(Transfers.rows("docker", env, cli, plan, growth, "4", 1.0, "4", 1.0));
            Concurrency.measure("docker exec", () -> execTrue(env),
                    () -> Meter.program(List.of("docker", "exec", cid, "true"), null, true), plan, growth);
            memory("docker", Map.of("airlock.backend", "docker", "airlock.docker.container", cid));
        } finally {
            Services.stopContainer(cid);
        }
    }

    /**
     * A 64 MiB {@code files().write} onto the container's root filesystem through the archive API
     * ({@code airlock.docker.files=archive}) against the same write through the shell path (the
     * default), two environments attached to one container.
     */
    void dockerFiles() throws Exception {
        String why = Services.whyNoDocker();
        if (why != null) {
            rows.add(Row.notMeasured("4", "docker files().write 64 MiB, archive route vs shell path", "(no target)", why));
            return;
        }
        references.put("docker-files", "the shell path");
        byte[] payload = new byte[64 << 20];
        new java.util.Random(64).nextBytes(payload);
        String cid = Services.startContainer();
        try (Environment archive = Environments.open(Settings.of("airlock.backend", "docker", "airlock.docker.container", cid,
                     "airlock.docker.files", "archive"));
             Environment shell = Environments.open(Settings.of("airlock.backend", "docker", "airlock.docker.container", cid))) {
            Sample a = new Sample();
            Sample r = new Sample();
            Progress.say("docker files().write 64 MiB, archive route and shell path");
            Meter.alternate(() -> write(archive, "/airlock-bench-archive", payload), a,
                    () -> write(shell, "/airlock-bench-shell", payload), r, plan.warmup(), plan.reps());
            rows.add(new Row("4", "docker `files().write` 64 MiB onto the container's root filesystem",
                    "`files().write(path, Payload.of(bytes))` then a `stat` of its size, archive route (`airlock.docker.files=archive`: `PUT /containers/ID/archive`), wall time",
                    "the same write and stat through the shell path (the default), wall time",
                    a, r, "(no target)", Double.NaN, ""));
        } finally {
            Services.stopContainer(cid);
        }
    }

    private static void write(Environment env, String path, byte[] payload) throws IOException {
        env.files().write(path, Payload.of(payload));
        long seen = env.files().stat(path).map(dev.airlock.FileStat::size).orElse(-1L);
        if (seen != payload.length) {
            throw new IOException("wrote " + seen + " of " + payload.length + " bytes to " + path);
        }
    }

    void ssh() throws Exception {
        String why = Services.Sshd.whyNot();
        if (why != null) {
            rows.add(Row.notMeasured("5", "ssh", "<= 1.0", why));
            return;
        }
        references.put("ssh", "OpenSSH (ControlMaster)");
        try (Services.Sshd sshd = Services.Sshd.start(); Environment env = Environments.open(Settings.of(sshd.settings()))) {
            sshd.startMaster();
            Transfers.Reference fresh = new Transfers.Reference("OpenSSH `ssh`, a new connection each time", c -> sshd.ssh(false, c), true);
            Transfers.Reference shared = new Transfers.Reference("OpenSSH `ssh` over a `ControlMaster` connection", c -> sshd.ssh(true, c), true);
            Sample a = new Sample();
            Sample r = new Sample();
            Progress.say("ssh stdin 256 MiB, new connections");
            long bytes = Plan.MAIN_MIB * MIB;
            Meter.alternate(Transfers.airlockStdin(env, bytes), a, Transfers.referenceStdin(fresh, bytes), r, plan.warmup(), plan.reps());
            rows.add(new Row("5", "ssh 256 MiB stdin (`cat > /dev/null`), reference connects anew", "Airlock `exec` with a streamed stdin (connection open)",
                    fresh.how() + ", the same bytes to its stdin", a, r, "(no target)", Double.NaN, ""));
            rows.addAll(Transfers.rows("ssh", env, shared, plan, growth, "5", 1.0, "5", 1.0));
            Concurrency.measure("ssh exec", () -> execTrue(env), () -> Meter.program(sshd.ssh(true, "true"), null, true), plan, growth);
            memory("ssh", sshd.settings());
        }
    }

    /** The two -Xmx64m scenarios on a backend, each in a child JVM; RSS from /usr/bin/time. */
    void memory(String backend, Map<String, String> settings) throws IOException {
        for (String mode : List.of("stdin", "fanout")) {
            Progress.say(backend + " memory " + mode);
            Path result = work.resolve("memory-" + backend + "-" + mode);
            List<String> argv = new ArrayList<>(List.of(javaBin(), "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                    MemoryProbe.class.getName(), mode, result.toString()));
            settings.forEach((k, v) -> argv.add(k + "=" + v));
            Sample s = new Sample();
            Meter.once(() -> Meter.program(argv, null, true), s);
            String outcome = Files.exists(result) ? Files.readString(result).strip() : "fail: no result (" + s.lastFailure() + ")";
            Files.deleteIfExists(result);
            if (outcome.startsWith("ok ")) {
                long heap = Long.parseLong(outcome.substring(3).strip());
                s.memory(heap, 0);
            }
            String name = mode.equals("stdin") ? backend + " 1 GiB stdin (`wc -c`) in a -Xmx64m JVM"
                    : backend + " 16 concurrent execs printing 8 MiB each (default capture) in a -Xmx64m JVM";
            rows.add(new Row("7", name, "the whole child JVM (start, open, run, close), wall time; heap and RSS are the child's",
                    "-", s, new Sample(), "passes with -Xmx64m", Double.NaN,
                    outcome.startsWith("ok") ? "pass" : "miss: " + outcome));
        }
    }

    static String javaBin() {
        return ProcessHandle.current().info().command().orElse("java");
    }
}
