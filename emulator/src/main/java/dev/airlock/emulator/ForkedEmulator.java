package dev.airlock.emulator;

import dev.airlock.settings.Settings;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An emulator in a JVM of its own, with a heap of its own: what a test needs to show that the
 * emulator streams (a child with {@code -Xmx96m} and {@code -XX:+ExitOnOutOfMemoryError} dies if
 * a transfer is held in its heap) and what a measurement needs to see the emulator's heap apart
 * from the client's ({@link #heapPeak()}).
 *
 * <p>The child runs {@link #main}: the {@link Emulators#serve} contract on {@code 127.0.0.1:0},
 * with one addition on stdin: a line {@code heap} is answered on stdout with
 * {@code heap peak=BYTES old=BYTES}, the sum of the heap pools' peak usage and the old
 * generation's since the last such line (the peaks are then reset). Credentials go to the child in its environment, never in argv.
 */
public final class ForkedEmulator implements AutoCloseable {
    private final Process process;
    private final BufferedReader out;
    private final PrintStream in;
    private final URI url;
    private final Path log;

    private ForkedEmulator(Process process, BufferedReader out, URI url, Path log) {
        this.process = process;
        this.out = out;
        this.in = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
        this.url = url;
        this.log = log;
    }

    /**
     * Starts emulator {@code name} in {@code java [jvmOptions] -cp classPath}, with
     * {@code environment} added to this process's, and waits for its {@code listening on} line.
     * The child's stderr goes to {@code log}.
     */
    public static ForkedEmulator start(String name, List<String> jvmOptions, String classPath, Map<String, String> environment,
                                       Path log) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", classPath, ForkedEmulator.class.getName(), name));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(environment);
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        try {
            for (String line; (line = out.readLine()) != null; ) {
                if (line.startsWith("listening on ")) {
                    return new ForkedEmulator(p, out, URI.create(line.substring("listening on ".length()).trim()), log);
                }
            }
        } catch (IOException | RuntimeException e) {
            p.destroyForcibly();
            throw e;
        }
        p.destroyForcibly();
        throw new IOException("emulator " + name + " ended before it listened (exit " + waitQuietly(p) + "); see " + log);
    }

    /** What {@link #heapPeak()} reports, in bytes. */
    public record HeapPeak(long total, long oldGeneration) {
        @Override
        public String toString() {
            return "peak heap " + (total >> 20) + " MiB (old generation " + (oldGeneration >> 20) + " MiB)";
        }
    }

    public URI url() {
        return url;
    }

    /** Whether the child still runs (false after an OutOfMemoryError with {@code -XX:+ExitOnOutOfMemoryError}). */
    public boolean alive() {
        return process.isAlive();
    }

    /** The child's exit code once it has ended. */
    public int exitValue() {
        return process.exitValue();
    }

    /**
     * Runs {@code work} against the child and checks the child outlived it: a child that died
     * (an OutOfMemoryError under {@code -XX:+ExitOnOutOfMemoryError}) fails with its exit code and
     * its log, with {@code work}'s own failure, if any, as the cause; a live child lets that
     * failure through unchanged.
     */
    public <T> T outliving(java.util.concurrent.Callable<T> work) throws Exception {
        T result;
        try {
            result = work.call();
        } catch (Exception | Error e) {
            if (!alive()) {
                throw died(e);
            }
            throw e;
        }
        if (!alive()) {
            throw died(null);
        }
        return result;
    }

    private IllegalStateException died(Throwable cause) {
        String text;
        try {
            text = java.nio.file.Files.readString(log);
        } catch (IOException e) {
            text = "(no log: " + e.getMessage() + ")";
        }
        return new IllegalStateException("the emulator died (exit " + waitQuietly(process) + "): " + text, cause);
    }

    /**
     * The child's heap since the previous call (or its start), in bytes: the sum of its heap pools'
     * peaks (garbage not yet collected included, so it grows with the heap the JVM may use), and
     * the old generation's peak (where G1 puts any array of half a region or more at once: a
     * whole payload shows there).
     */
    public HeapPeak heapPeak() throws IOException {
        in.println("heap");
        for (String line; (line = out.readLine()) != null; ) {
            if (line.startsWith("heap peak=")) {
                String[] f = line.substring("heap peak=".length()).trim().split(" old=");
                return new HeapPeak(Long.parseLong(f[0]), Long.parseLong(f[1]));
            }
        }
        throw new IOException("the emulator ended (exit " + waitQuietly(process) + ")");
    }

    /**
     * The heap peak of one transfer of {@code size} pseudo-random bytes through {@code env}'s files
     * at {@code /tmp/a.bin}: leg {@code read} reads (and hashes) a file written before the
     * measurement; any other leg writes it. What a heap probe of each emulator measures.
     */
    public HeapPeak transferPeak(dev.airlock.Environment env, String leg, long size) throws IOException {
        if (leg.equals("read")) {
            env.files().write("/tmp/a.bin", dev.airlock.Payload.ofStream(TransferCheck.pseudoRandom(size, 1), size));
        }
        heapPeak();
        if (leg.equals("read")) {
            try (java.io.InputStream in = env.files().read("/tmp/a.bin")) {
                TransferCheck.sha256(in);
            }
        } else {
            env.files().write("/tmp/a.bin", dev.airlock.Payload.ofStream(TransferCheck.pseudoRandom(size, 1), size));
        }
        return heapPeak();
    }

    /**
     * Prints a heap probe's line, {@code LEG XMX: RESULT}: what {@code probe} answered, or
     * {@code FAILED} with why (the emulator ran out of heap when it died under the probe).
     */
    public void report(String leg, String xmx, java.util.concurrent.Callable<String> probe) {
        String result;
        try {
            result = probe.call();
        } catch (Exception | Error failed) {
            result = "FAILED" + (alive() ? " " + failed : " (the emulator ran out of heap)");
        }
        System.out.println(leg + " " + xmx + ": " + result);
    }

    /** Ends the child (its shutdown hook stops its sandboxes) and waits for it, then kills it if it lingers. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    private static String waitQuietly(Process p) {
        try {
            return p.waitFor(10, TimeUnit.SECONDS) ? Integer.toString(p.exitValue()) : "none yet";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /** The child: {@code NAME}, served on {@code 127.0.0.1:0} with this process's settings; {@code heap} lines on stdin answered. */
    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: ForkedEmulator NAME (credentials from the environment)");
            System.exit(2);
        }
        Thread heap = new Thread(ForkedEmulator::answerHeapQuestions, "forked-emulator-heap");
        heap.setDaemon(true);
        heap.start();
        Emulators.serve(args[0], Emulators.DEFAULT_LISTEN, Settings.fromProcess(), ForkedEmulator.class.getClassLoader(),
                System.out, System.err);
    }

    private static void answerHeapQuestions() {
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.trim().equals("heap")) {
                    long peak = 0;
                    long old = 0;
                    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                        if (pool.getType() == MemoryType.HEAP) {
                            peak += pool.getPeakUsage().getUsed();
                            if (pool.getName().contains("Old") || pool.getName().contains("Tenured")) {
                                old += pool.getPeakUsage().getUsed();
                            }
                            pool.resetPeakUsage();
                        }
                    }
                    synchronized (System.out) {
                        System.out.println("heap peak=" + peak + " old=" + old);
                        System.out.flush();
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
