package dev.airlock.bench;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * An agent's turn (issue 35): open, 3 reads of 4 KiB files, 2 writes of 4 KiB files, 5 execs
 * ({@code true}, {@code ls -la}, {@code cat} of a file, 1 MiB of output, {@code exit 3}), close;
 * through Airlock against the same work done the way a user would without it. The two sides
 * alternate (A B, B A, ...); each turn is timed whole (wall time) and step by step, so that a
 * miss can be read off the table: the step medians go into the turn row's "how timed" cells, and
 * the open and close steps get rows of their own.
 */
final class Turn {
    static final int FILE_BYTES = 4096;
    static final int OUT_BYTES = 1 << 20;
    /** The steps of one turn, in order; every side times each of them. */
    static final List<String> STEPS = List.of("open", "read", "read", "read", "write", "write",
            "true", "ls -la", "cat", "1 MiB out", "exit 3", "close");
    static final int OPEN = 0;
    static final int EXEC_TRUE = 6;
    static final int CLOSE = STEPS.size() - 1;

    /** The five commands: what each prints (-1: anything but nothing) and its exit code. */
    record Command(String line, long stdoutBytes, int exit) {
    }

    /** Where one side's turn finds its files: three 4 KiB files to read, two paths to write, a directory to list. */
    record Paths(List<String> reads, List<String> writes, String dir) {
        List<Command> commands() {
            return List.of(new Command("true", 0, 0), new Command("ls -la " + dir, -1, 0),
                    new Command("cat " + reads.get(0), FILE_BYTES, 0),
                    // Printable, so that every service's output framing (JSON strings included) carries it as is.
                    new Command("yes abcdefghijklmno | head -c " + OUT_BYTES, OUT_BYTES, 0), new Command("exit 3", 0, 3));
        }
    }

    /** One side's turn: does every step in order, calling {@link Clock#step()} after each. */
    @FunctionalInterface
    interface Work {
        void turn(Clock clock) throws Exception;
    }

    /** The seconds of each step of one turn, from the turn's start. */
    static class Clock {
        final double[] seconds = new double[STEPS.size()];
        private int next;
        private long last = System.nanoTime();

        void step() {
            long now = System.nanoTime();
            seconds[next++] = (now - last) / 1e9;
            last = now;
        }

        /** The steps a side measured elsewhere (an SDK process), all at once. */
        void all(double[] s) {
            if (s.length != seconds.length) {
                throw new IllegalStateException("the SDK side reported " + s.length + " steps, not " + seconds.length);
            }
            System.arraycopy(s, 0, seconds, 0, s.length);
            next = s.length;
        }

        boolean complete() {
            return next == seconds.length;
        }
    }

    /** A side's whole turns (wall time, or the SDK's own timing) and each turn's steps. */
    static final class Result {
        final Sample total = new Sample();
        final List<double[]> turns = new ArrayList<>();

        /** A sample of one figure per turn (a step, or steps added). */
        Sample of(ToDoubleFunction<double[]> f) {
            Sample s = new Sample();
            turns.forEach(t -> s.add(f.applyAsDouble(t)));
            for (int i = 0; i < total.failures(); i++) {
                s.failed(new RuntimeException(total.lastFailure()));
            }
            s.memory(total.heapPeak(), total.rssPeak());
            return s;
        }

        double median(int step) {
            return of(t -> t[step]).median();
        }
    }

    private Turn() {
    }

    /** Runs {@code a} and {@code r} alternately after {@code warmup} rounds; returns {Airlock, reference}. */
    static Result[] alternate(String label, Work a, Work r, int warmup, int pairs) {
        Result ra = new Result();
        Result rr = new Result();
        Progress.say(label + ": " + warmup + " warm-up round(s), then " + pairs + " interleaved pairs");
        for (int i = 0; i < warmup; i++) {
            once(a, null);
            once(r, null);
        }
        for (int i = 0; i < pairs; i++) {
            if (i % 2 == 0) {
                once(a, ra);
                once(r, rr);
            } else {
                once(r, rr);
                once(a, ra);
            }
        }
        return new Result[] {ra, rr};
    }

    private static void once(Work w, Result into) {
        Clock[] c = new Clock[1];
        int before = into == null ? 0 : into.total.count();
        Meter.once(() -> {
            c[0] = new Clock();
            w.turn(c[0]);
            if (!c[0].complete()) {
                throw new IllegalStateException("the turn skipped a step");
            }
        }, into == null ? null : into.total);
        if (into != null && into.total.count() > before) {
            into.turns.add(c[0].seconds.clone());
        }
    }

    /** The Airlock side of a turn on an open-able environment, the same on every backend. */
    static Work airlock(Opener open, Paths f, byte[] content) {
        if (f.reads().size() != 3 || f.writes().size() != 2) {
            throw new IllegalArgumentException("a turn reads 3 files and writes 2");
        }
        return clock -> {
            Environment env = open.open();
            try {
                clock.step();
                for (String p : f.reads()) {
                    byte[] b = env.files().readBytes(p);
                    Streams.expect(FILE_BYTES, b.length, "read " + p);
                    clock.step();
                }
                for (String p : f.writes()) {
                    env.files().write(p, content);
                    clock.step();
                }
                for (Command c : f.commands()) {
                    try (ExecResult x = env.exec(ExecRequest.of(c.line()))) {
                        check(c, x.exitCode(), x.stdout().size());
                    }
                    clock.step();
                }
            } finally {
                env.close();
            }
            clock.step();
        };
    }

    @FunctionalInterface
    interface Opener {
        Environment open() throws Exception;
    }

    static void check(Command c, int exit, long stdoutBytes) throws IOException {
        if (exit != c.exit()) {
            throw new IOException("`" + c.line() + "` exited " + exit + ", expected " + c.exit());
        }
        if (c.stdoutBytes() >= 0 ? stdoutBytes != c.stdoutBytes() : stdoutBytes <= 0) {
            throw new IOException("`" + c.line() + "` printed " + stdoutBytes + " bytes");
        }
    }

    /** What a run of a program gave: its exit code and its stdout. */
    record Ran(int exit, byte[] out) {
    }

    /**
     * Runs {@code argv} with {@code stdin} (or /dev/null), reading its stdout whole; stderr is
     * discarded. With {@code external} it runs under /usr/bin/time and reports the program's peak
     * RSS to the {@link Meter}; with {@code detached} its stdout is discarded too (a program that
     * leaves a daemon behind, as {@code ssh} with {@code ControlPersist} does, would hold a pipe open).
     */
    static Ran program(List<String> argv, byte[] stdin, boolean external, boolean detached) throws IOException, InterruptedException {
        Path rss = external ? Files.createTempFile("airlock-bench-rss", ".txt") : null;
        try {
            List<String> cmd = new ArrayList<>();
            if (external && Files.isExecutable(Path.of("/usr/bin/time"))) {
                cmd.addAll(List.of("/usr/bin/time", "-f", "%M", "-o", rss.toString()));
            }
            cmd.addAll(argv);
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD);
            if (stdin == null) {
                pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            }
            if (detached) {
                pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
            }
            Process p = pb.start();
            if (stdin != null) {
                try (OutputStream o = p.getOutputStream()) {
                    o.write(stdin);
                }
            }
            byte[] out;
            try (InputStream in = p.getInputStream()) {
                out = in.readAllBytes();
            }
            if (!p.waitFor(300, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(argv.get(0) + " did not finish in 300 s");
            }
            if (rss != null) {
                String kb = Files.readString(rss).strip();
                if (!kb.isEmpty()) {
                    Meter.external(Long.parseLong(kb.lines().reduce((x, y) -> y).orElse("0").strip()) * 1024);
                }
            }
            return new Ran(p.exitValue(), out);
        } finally {
            if (rss != null) {
                Files.deleteIfExists(rss);
            }
        }
    }

    /** {@link #program} that must exit 0. */
    static byte[] ok(List<String> argv, byte[] stdin, boolean external, boolean detached) throws IOException, InterruptedException {
        Ran r = program(argv, stdin, external, detached);
        if (r.exit() != 0) {
            throw new IOException(String.join(" ", argv) + " exited " + r.exit());
        }
        return r.out();
    }

    /** The step medians of a side, in milliseconds, in the order of {@link #STEPS}. */
    static String steps(Result r) {
        if (r.turns.isEmpty()) {
            return "no turn completed";
        }
        StringBuilder b = new StringBuilder("step medians (ms): ");
        for (int i = 0; i < STEPS.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(STEPS.get(i)).append(' ')
                    .append(String.format(Locale.ROOT, "%.1f", r.median(i) * 1000));
        }
        return b.toString();
    }

    /**
     * The three rows of a backend: the whole turn against {@code limit}, the open and the close.
     * {@code openReference} picks the reference's open figure from its steps (docker adds its
     * first exec); {@code openLimit} is NaN for a row without a ratio target.
     */
    static List<Row> rows(String backend, Result[] s, String airlockHow, String referenceHow, double limit,
                          ToDoubleFunction<double[]> openReference, String openReferenceHow, String openTarget, double openLimit,
                          String closeReferenceHow) {
        List<Row> rows = new ArrayList<>();
        String scenario = backend + " agent turn (open, 3 reads and 2 writes of 4 KiB, 5 execs, close)";
        rows.add(new Row("35", scenario, airlockHow + "; " + steps(s[0]), referenceHow + "; " + steps(s[1]),
                s[0].total, s[1].total, "<= " + limit, limit, ""));
        Sample ao = s[0].of(t -> t[OPEN]);
        rows.add(new Row("35", backend + " agent turn: open", "the turn's open step (`Environments.open`)", openReferenceHow,
                ao, openReference == null ? new Sample() : s[1].of(openReference), openTarget,
                openReference == null ? Double.NaN : openLimit,
                openReference == null ? absolute(ao, openLimit) : ""));
        rows.add(new Row("35", backend + " agent turn: close", "the turn's close step (`env.close()`)", closeReferenceHow,
                s[0].of(t -> t[CLOSE]), closeReferenceHow.equals("-") ? new Sample() : s[1].of(t -> t[CLOSE]),
                "(no target)", Double.NaN, ""));
        return rows;
    }

    /** An absolute target in seconds (local open <= 20 ms): met or missed by the median. */
    private static String absolute(Sample a, double limitSeconds) {
        if (a.count() == 0 || a.failures() > 0) {
            return a.count() == 0 ? "not measured: " + a.lastFailure() : "miss: Airlock failed";
        }
        return a.median() <= limitSeconds ? "met" : "miss: " + Report.seconds(a.median()) + " over "
                + Report.seconds(limitSeconds) + "; see Agent turn in the analysis";
    }
}
