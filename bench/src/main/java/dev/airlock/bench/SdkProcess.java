package dev.airlock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One long-lived node process running an SDK script of bench/sdk (protocol in lines.cjs): it
 * creates its sandbox once, then answers each request with the milliseconds it measured around
 * the SDK call alone. Its answers are read on a thread so that a hung SDK is a bounded failure.
 */
final class SdkProcess implements AutoCloseable {
    private static final long ANSWER_SECONDS = 300;
    private static final String EOF = "\u0000eof";

    private final Process process;
    private final Writer in;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private final Path stderr;

    private SdkProcess(Process process, Path stderr) {
        this.process = process;
        this.stderr = stderr;
        this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    answers.add(line);
                }
            } catch (IOException e) {
                // the process ended: EOF below tells
            }
            answers.add(EOF);
        }, "bench-sdk-answers");
        reader.setDaemon(true);
        reader.start();
    }

    /** The node binary on PATH, or null. */
    static String node() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, "node");
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }

    /** Starts {@code node script args...} with {@code env} added and a private HOME; returns once it said "ready". */
    static SdkProcess start(Path script, List<String> args, Map<String, String> env, Path work) throws IOException {
        List<String> argv = new ArrayList<>(List.of(node(), script.toAbsolutePath().toString()));
        argv.addAll(args);
        Path home = Files.createTempDirectory(work, "sdk-home");
        Path err = Files.createTempFile(work, "sdk-stderr", ".txt");
        ProcessBuilder pb = new ProcessBuilder(argv).redirectError(err.toFile());
        pb.environment().putAll(env);
        pb.environment().put("HOME", home.toString()); // no ~/.modal.toml or similar of the user's
        SdkProcess p = new SdkProcess(pb.start(), err);
        try {
            String first = p.answer();
            if (!first.equals("ready")) {
                throw new IOException(script.getFileName() + " did not start: " + first);
            }
        } catch (IOException | RuntimeException e) {
            p.close();
            throw e;
        }
        return p;
    }

    /** Sends one request; reports the SDK's own timing (and node's peak RSS) to the {@link Meter}. */
    void request(String line) throws IOException {
        send(line);
    }

    /**
     * Sends a request whose answer also gives its steps ("ms TOTAL steps A,B,..." in ms, as the
     * {@code turn} request answers); returns the steps in seconds.
     */
    double[] steps(String line) throws IOException {
        String[] words = send(line);
        if (words.length < 4 || !words[2].equals("steps")) {
            throw new IOException("the SDK side gave no steps: " + String.join(" ", words));
        }
        String[] ms = words[3].split(",");
        double[] s = new double[ms.length];
        for (int i = 0; i < ms.length; i++) {
            s[i] = Double.parseDouble(ms[i]) / 1000.0;
        }
        return s;
    }

    /** Sends one request; reports the SDK's own total (and node's peak RSS) to the {@link Meter}; returns the answer's words. */
    private String[] send(String line) throws IOException {
        in.write(line + "\n");
        in.flush();
        String answer = answer();
        if (!answer.startsWith("ms ")) {
            throw new IOException("the SDK side failed: " + (answer.startsWith("fail ") ? answer.substring(5) : answer));
        }
        String[] words = answer.strip().split("\\s+");
        Meter.reported(Double.parseDouble(words[1]) / 1000.0);
        long rss = peakRss();
        if (rss > 0) {
            Meter.external(rss);
        }
        return words;
    }

    private String answer() throws IOException {
        String a;
        try {
            a = answers.poll(ANSWER_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for the SDK process");
        }
        if (a == null) {
            throw new IOException("the SDK process gave no answer in " + ANSWER_SECONDS + " s");
        }
        if (a.equals(EOF)) {
            throw new IOException("the SDK process ended: " + lastErrorLine());
        }
        return a;
    }

    /** node's peak RSS so far (VmHWM), in bytes; 0 when /proc does not say. */
    private long peakRss() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
                if (l.startsWith("VmHWM:")) {
                    return Long.parseLong(l.replaceAll("\\D", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux, or the process is gone: no figure
        }
        return 0;
    }

    private String lastErrorLine() {
        try {
            return Files.readAllLines(stderr).stream().filter(l -> !l.isBlank()).reduce((x, y) -> y).orElse("(no stderr)");
        } catch (IOException e) {
            return "(stderr unreadable)";
        }
    }

    /** Asks the script to close its sandbox and exit; bounded, then killed. */
    @Override
    public void close() {
        try {
            in.write("quit\n");
            in.close();
        } catch (IOException e) {
            // already gone
        }
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
