package dev.airlock.bench;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The local backend's small operations the way an agent calls them: one Airlock call, then one
 * reference call, alternately (never a run of one side then a run of the other), each timed on its
 * own, medians and their ratio. Rows: a 4 KiB {@code files().write} against {@code Files.write}, a
 * 4 KiB {@code files().read} against {@code Files.readAllBytes}, {@code exec true} against
 * {@code ProcessBuilder} {@code bash -c true} (outputs read to their end, waitFor) both interleaved
 * and back to back (the way JMH measures it), and 64 {@code exec true} at once (rounds of each side
 * alternating; every command's latency is a sample).
 *
 * <p>Needs only the core and the local backend, so it runs without JMH:
 * {@code java -cp CORE:LOCAL:SLF4J:bench/target/classes dev.airlock.bench.SmallOpsLatency
 * [--isolation none|bwrap] [--pairs N] [--only write,read,exec,exec64]}.
 */
public final class SmallOpsLatency {
    private static final byte[] SMALL = new byte[4096];

    private SmallOpsLatency() {
    }

    /** One timed call. */
    @FunctionalInterface
    interface Call {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        String isolation = null;
        int pairs = 101;
        List<String> only = List.of("write", "read", "exec", "exec64");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--isolation" -> isolation = args[++i];
                case "--pairs" -> pairs = Integer.parseInt(args[++i]);
                case "--only" -> only = Arrays.asList(args[++i].split(","));
                default -> {
                    System.err.println("usage: SmallOpsLatency [--isolation none|bwrap] [--pairs N] [--only write,read,exec,exec64]");
                    System.exit(2);
                }
            }
        }
        Arrays.fill(SMALL, (byte) 'x');
        Settings s = Settings.of("airlock.backend", "local");
        if (isolation != null) {
            s = s.with("airlock.local.isolation", isolation);
        }
        Path dir = Files.createTempDirectory("airlock-smallops");
        Map<String, String> rows = new LinkedHashMap<>();
        try (Environment env = Environments.open(s)) {
            Path a = dir.resolve("airlock");
            Path r = dir.resolve("plain");
            Files.write(a, SMALL);
            Files.write(r, SMALL);
            String ap = a.toString();
            if (only.contains("write")) {
                rows.put("write 4 KiB: files().write vs Files.write",
                        interleaved(pairs, () -> env.files().write(ap, SMALL), () -> Files.write(r, SMALL)));
            }
            if (only.contains("write")) {
                Path t = dir.resolve("atomic");
                Files.write(t, SMALL);
                int[] k = new int[1];
                rows.put("write 4 KiB: files().write vs the same semantics (temp file, rename over; diagnostic)",
                        interleaved(pairs, () -> env.files().write(ap, SMALL), () -> {
                            Path tmp = dir.resolve(".tmp-" + k[0]++);
                            Files.write(tmp, SMALL, java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE);
                            Files.move(tmp, t, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                        }));
            }
            if (only.contains("read")) {
                rows.put("read 4 KiB: files().readBytes vs Files.readAllBytes",
                        interleaved(pairs, () -> env.files().readBytes(ap), () -> Files.readAllBytes(r)));
            }
            if (only.contains("exec")) {
                rows.put("exec true, interleaved: env.exec vs ProcessBuilder bash -c true",
                        interleaved(pairs, () -> execTrue(env), SmallOpsLatency::processTrue));
                rows.put("exec true, back to back (runs of " + pairs + "): env.exec vs ProcessBuilder bash -c true",
                        backToBack(pairs, () -> execTrue(env), SmallOpsLatency::processTrue));
                rows.put("exec true, interleaved: env.exec vs ProcessBuilder setsid bash -c true (diagnostic)",
                        interleaved(pairs, () -> execTrue(env), SmallOpsLatency::processSetsidTrue));
            }
            if (only.contains("cpu")) {
                rows.put("CPU per exec true (this JVM / its children, " + pairs + " calls each, after 20)",
                        "airlock " + cpu(pairs, () -> execTrue(env)) + "; reference " + cpu(pairs, SmallOpsLatency::processTrue));
            }
            if (only.contains("exec64")) {
                rows.put("64 x exec true at once, p50 of every command: env.exec vs ProcessBuilder bash -c true",
                        concurrent(64, Math.max(3, pairs / 20), () -> execTrue(env), SmallOpsLatency::processTrue));
            }
        } finally {
            try (var walk = Files.walk(dir)) {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        System.out.println("isolation: " + (isolation == null ? "default" : isolation) + ", pairs: " + pairs);
        rows.forEach((k, v) -> System.out.println(k + ": " + v));
    }

    private static void execTrue(Environment env) {
        try (ExecResult x = env.exec(ExecRequest.of("true"))) {
            if (x.exitCode() != 0) {
                throw new IllegalStateException("exec true exited " + x.exitCode());
            }
        }
    }

    private static void processTrue() throws IOException, InterruptedException {
        run(new ProcessBuilder("bash", "-c", "true"));
    }

    private static void processSetsidTrue() throws IOException, InterruptedException {
        run(new ProcessBuilder("setsid", "bash", "-c", "true"));
    }

    private static void run(ProcessBuilder pb) throws IOException, InterruptedException {
        Process p = pb.start();
        p.getOutputStream().close();
        p.getInputStream().readAllBytes();
        p.getErrorStream().readAllBytes();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("reference exited " + p.exitValue());
        }
    }

    /** {@code pairs} pairs after 10 warm-up pairs; the side that goes first alternates. */
    static String interleaved(int pairs, Call airlock, Call reference) throws Exception {
        for (int i = 0; i < 10; i++) {
            airlock.run();
            reference.run();
        }
        double[] a = new double[pairs];
        double[] r = new double[pairs];
        for (int i = 0; i < pairs; i++) {
            if (i % 2 == 0) {
                a[i] = time(airlock);
                r[i] = time(reference);
            } else {
                r[i] = time(reference);
                a[i] = time(airlock);
            }
        }
        return summary(a, r);
    }

    /** The JMH way: a run of Airlock calls, then a run of reference calls. */
    static String backToBack(int n, Call airlock, Call reference) throws Exception {
        double[] a = new double[n];
        double[] r = new double[n];
        for (int i = 0; i < 10; i++) {
            airlock.run();
        }
        for (int i = 0; i < n; i++) {
            a[i] = time(airlock);
        }
        for (int i = 0; i < 10; i++) {
            reference.run();
        }
        for (int i = 0; i < n; i++) {
            r[i] = time(reference);
        }
        return summary(a, r);
    }

    /** {@code rounds} rounds of {@code n} calls started at once, the sides alternating by round. */
    static String concurrent(int n, int rounds, Call airlock, Call reference) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        List<Double> a = new ArrayList<>();
        List<Double> r = new ArrayList<>();
        try {
            round(pool, n, airlock, new ArrayList<>());
            round(pool, n, reference, new ArrayList<>());
            for (int i = 0; i < rounds; i++) {
                if (i % 2 == 0) {
                    round(pool, n, airlock, a);
                    round(pool, n, reference, r);
                } else {
                    round(pool, n, reference, r);
                    round(pool, n, airlock, a);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        return summary(a.stream().mapToDouble(Double::doubleValue).toArray(), r.stream().mapToDouble(Double::doubleValue).toArray());
    }

    private static void round(ExecutorService pool, int n, Call call, List<Double> into) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Double>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            fs.add(pool.submit(() -> {
                go.await();
                return time(call);
            }));
        }
        go.countDown();
        for (Future<Double> f : fs) {
            into.add(f.get());
        }
    }

    /** This JVM's and its reaped children's CPU per call, from /proc/self/stat (utime+stime, cutime+cstime). */
    static String cpu(int n, Call call) throws Exception {
        for (int i = 0; i < 20; i++) {
            call.run();
        }
        long[] before = selfAndChildrenTicks();
        for (int i = 0; i < n; i++) {
            call.run();
        }
        long[] after = selfAndChildrenTicks();
        double tick = 1000.0 / 100; // USER_HZ is 100 on Linux
        return String.format("%.2f ms / %.2f ms", (after[0] - before[0]) * tick / n, (after[1] - before[1]) * tick / n);
    }

    private static long[] selfAndChildrenTicks() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // fields from state (3): utime 14, stime 15, cutime 16, cstime 17 -> indexes 11..14
        return new long[] {Long.parseLong(f[11]) + Long.parseLong(f[12]), Long.parseLong(f[13]) + Long.parseLong(f[14])};
    }

    private static double time(Call c) throws Exception {
        long t0 = System.nanoTime();
        c.run();
        return (System.nanoTime() - t0) / 1e6;
    }

    private static String summary(double[] a, double[] r) {
        double ma = median(a);
        double mr = median(r);
        return String.format("airlock %.3f ms, reference %.3f ms (medians, n=%d/%d), ratio %.2f", ma, mr, a.length, r.length, ma / mr);
    }

    static double median(double[] x) {
        double[] s = x.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }
}
