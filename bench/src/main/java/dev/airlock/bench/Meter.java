package dev.airlock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs two sides alternately (A B, then B A, ...) after a warm-up, timing each repetition and
 * recording peak heap and peak RSS. A reference side that runs another program (the Docker CLI,
 * OpenSSH) reports that program's peak RSS through {@link #external}; otherwise this JVM's counts.
 */
final class Meter {
    private static final ThreadLocal<long[]> EXTERNAL = ThreadLocal.withInitial(() -> new long[1]);
    /** Seconds a side measured itself (around the transfer only); NaN: the wall time of its run counts. */
    private static final ThreadLocal<double[]> REPORTED = ThreadLocal.withInitial(() -> new double[] {Double.NaN});
    private static final Path TIME = Path.of("/usr/bin/time");

    private Meter() {
    }

    static void alternate(Side a, Sample sa, Side b, Sample sb, int warmup, int reps) {
        for (int i = 0; i < warmup; i++) {
            once(a, null);
            once(b, null);
        }
        for (int i = 0; i < reps; i++) {
            if (i % 2 == 0) {
                once(a, sa);
                once(b, sb);
            } else {
                once(b, sb);
                once(a, sa);
            }
        }
    }

    /** Runs {@code side} once; records time and memory in {@code into} when given. */
    static void once(Side side, Sample into) {
        System.gc();
        Memory.reset();
        EXTERNAL.get()[0] = 0;
        REPORTED.get()[0] = Double.NaN;
        long t0 = System.nanoTime();
        try {
            side.run();
        } catch (Exception | Error e) {
            if (into != null) {
                into.failed(e);
            } else {
                System.err.println("bench: warm-up failed: " + e);
            }
            return;
        }
        long t1 = System.nanoTime();
        if (into != null) {
            double own = REPORTED.get()[0];
            into.add(Double.isNaN(own) ? (t1 - t0) / 1e9 : own);
            long ext = EXTERNAL.get()[0];
            into.memory(ext > 0 ? 0 : Memory.heapPeak(), ext > 0 ? ext : Memory.rssPeak());
        }
    }

    /**
     * Reports the time the current side measured around its transfer alone, which then stands for
     * the run's wall time: a side whose setup or check cannot be left out of its run (a request to
     * a long-lived SDK process, a size check after a write) times just the transfer, as the other does.
     */
    static void reported(double seconds) {
        REPORTED.get()[0] = seconds;
    }

    /** Reports the peak RSS of a program the current side ran (the largest one counts). */
    static void external(long rssBytes) {
        long[] e = EXTERNAL.get();
        e[0] = Math.max(e[0], rssBytes);
    }

    /**
     * Runs {@code argv} with its stdin fed by {@code in} (when not null) and its stdout counted,
     * under {@code /usr/bin/time} for its peak RSS when {@code external} (a program users would run
     * instead of this JVM); returns the stdout byte count after checking exit 0.
     */
    static long program(List<String> argv, InputStream in, boolean external) throws IOException, InterruptedException {
        Path rss = Files.createTempFile("airlock-bench-rss", ".txt");
        try {
            List<String> cmd = new ArrayList<>();
            if (external && Files.isExecutable(TIME)) {
                cmd.addAll(List.of(TIME.toString(), "-f", "%M", "-o", rss.toString()));
            }
            cmd.addAll(argv);
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD);
            if (in == null) {
                pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            }
            Process p = pb.start();
            Thread feeder = null;
            if (in != null) {
                feeder = new Thread(() -> {
                    try (OutputStream o = p.getOutputStream(); in) {
                        in.transferTo(o);
                    } catch (IOException e) {
                        // the program ended early: its exit code tells
                    }
                }, "bench-feed");
                feeder.start();
            }
            long count = Streams.drain(p.getInputStream());
            if (!p.waitFor(600, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(argv.get(0) + " did not finish in 600 s");
            }
            if (feeder != null) {
                feeder.join();
            }
            if (p.exitValue() != 0) {
                throw new IOException(String.join(" ", argv) + " exited " + p.exitValue());
            }
            String kb = Files.readString(rss).strip();
            if (!kb.isEmpty()) {
                external(Long.parseLong(kb.lines().reduce((x, y) -> y).orElse("0").strip()) * 1024);
            }
            return count;
        } finally {
            Files.deleteIfExists(rss);
        }
    }
}
