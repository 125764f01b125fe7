package dev.airlock.spi;

import dev.airlock.Payload;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One {@code sh} kept running on the target for the core's group reads and signals, so that a
 * timeout's kill costs a line each way instead of a new command per step. A new command is slow
 * where the backend starts one expensively: a docker exec on podman (about 150 ms idle, over 2 s
 * under load), an ssh exec whose login shell reads startup files (a {@code ~/.bashrc} running
 * {@code pyenv init} took 0.65 s alone and 7.6 s for eight at once). The kill's two to four
 * steps could then outlast the stop bound, and a hook interrupted at its deadline left the tree's
 * TERM-ignoring grandchild running.
 *
 * <p>Each request is a script the core or the backend wrote (group reads and signals, with numbers
 * only; or a staged file's small text, quoted as one word, see {@link #carriableText}), then the
 * line {@link #END}; the shell runs it in a subshell and answers with its output and
 * {@code @airlock-control:STATUS}. What the target prints before the loop runs (a noisy login)
 * goes with the first request, a no-op whose answer is dropped. Once the shell fails, ends (a
 * command may kill it) or misses an answer's bound it is {@link #dead()} for good, and the caller
 * falls back to a command per script.
 */
public final class ControlShell implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlShell.class);
    /** The line that ends a request; a command finds the shell by it in its argv. */
    public static final String END = "@airlock-run";
    private static final String DONE = "@airlock-control:";
    /** What {@link #runWhole} puts after a script's output, with a token of its own. */
    private static final String WHOLE = "@airlock-whole:";
    private static final java.security.SecureRandom RANDOM = dev.airlock.shell.KernelRandom.create();
    private static final int MAX_ANSWER = 64 * 1024;
    /** What the reader offers when the shell's output ended. */
    private static final String GONE = new String("gone for good");

    /** The shell's script: reads scripts up to {@link #END}, runs each in a subshell, answers; ends at end of input. */
    public static final String LOOP = "while :; do s=; l=\n"
            + "while IFS= read -r l; do [ \"$l\" = " + END + " ] && break; s=\"$s$l\n\"; done\n"
            + "[ \"$l\" = " + END + " ] || exit 0\n"
            + "(eval \"$s\") </dev/null 2>/dev/null\n"
            + "printf '\\n" + DONE + "%s\\n' \"$?\"\n"
            + "done\n";

    /** The largest staged text sent through the shell; more goes through a command of its own. */
    static final int MAX_TEXT = 16 * 1024;

    private final RemoteProcess process;
    private final OutputStream in;
    private final Duration answerBound;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private volatile boolean dead;

    private ControlShell(RemoteProcess process, Duration answerBound) {
        this.process = process;
        this.in = process.stdin();
        this.answerBound = answerBound;
    }

    /**
     * Takes over {@code process}, a running {@link #LOOP} (the backend started it its own way), and
     * waits up to {@code startBound} for its first answer; released and an exception when none comes.
     *
     * @param name         names the reader threads ({@code airlock-control-NAME})
     * @param answerBound  how long each later answer may take before the shell counts as gone
     */
    public static ControlShell start(RemoteProcess process, String name, Duration answerBound, Duration startBound)
            throws IOException {
        ControlShell c = new ControlShell(process, answerBound);
        daemon("airlock-control-" + name, () -> c.readAnswers(process.stdout()));
        daemon("airlock-control-err-" + name, () -> drain(process.stderr()));
        try {
            c.run(":", startBound); // its answer carries whatever the target printed before the loop
        } catch (IOException e) {
            throw new IOException("the control shell did not start: " + e.getMessage(), e);
        }
        return c;
    }

    /** Starts a command the backend's own way: how {@link #tryStart} starts the {@link #LOOP}. */
    @FunctionalInterface
    public interface Starter {
        RemoteProcess start(String script) throws IOException;
    }

    /**
     * Starts the {@link #LOOP} with {@code starter} and takes it over as {@link #start} does; empty
     * (said at debug level) when either step fails: the core then runs each group read, signal
     * and removal as an exec of its own, so a missing control shell costs time, never a result.
     */
    public static Optional<ControlShell> tryStart(Starter starter, String name, Duration answerBound, Duration startBound) {
        try {
            return Optional.of(start(starter.start(LOOP), name, answerBound, startBound));
        } catch (IOException | RuntimeException e) {
            LOG.debug("no control shell {}: {}", name, e.getMessage());
            return Optional.empty();
        }
    }

    private static void daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    public boolean dead() {
        return dead;
    }

    /**
     * Runs {@code script} and returns its stdout. No answer within the answer bound (the shell was
     * killed, and its stream may stay open), an interrupt (the hook's deadline) or a broken stream
     * makes it dead for good: a late answer cannot be told from the next one.
     */
    public String run(String script) throws IOException {
        return run(script, answerBound);
    }

    /**
     * Runs {@code script} and returns its stdout only when the script exited 0 and the whole answer
     * came back: the script runs in a subshell followed by a trailer with a random token, and the
     * answer must end with it. Without it (the script failed, or printed a line that looks like the
     * shell's status line, which a hostile command could plant in a name the script prints, so the
     * answers may be out of step) the shell is closed for good and the caller runs the script as a
     * command instead. For scripts whose output a command may shape: path resolution, the probe.
     *
     * @param bound how long the answer may take; past it the shell counts as gone
     */
    public Optional<String> runWhole(String script, Duration bound) throws IOException {
        String trailer = WHOLE + Long.toHexString(RANDOM.nextLong() | 1L << 62);
        String answer = run("(\n" + script + (script.endsWith("\n") ? "" : "\n") + ") && printf '%s' '" + trailer + "'\n", bound);
        if (!answer.endsWith(trailer)) {
            close();
            return Optional.empty();
        }
        return Optional.of(answer.substring(0, answer.length() - trailer.length()));
    }

    /** {@link #runWhole(String, Duration)} within the shell's answer bound. */
    public Optional<String> runWhole(String script) throws IOException {
        return runWhole(script, answerBound);
    }

    /**
     * {@link #run(String)} with a bound of its own for this answer: a step that may take longer
     * than a kill's (a probe at open, within the open's deadline) instead of counting the shell gone
     * and running again elsewhere, which would do its work twice.
     */
    public synchronized String run(String script, Duration bound) throws IOException {
        if (dead) {
            throw new IOException("the control shell ended");
        }
        if (("\n" + script + "\n").contains("\n" + END + "\n")) {
            // The shell would take that line for the request's end, and the rest for another
            // request whose answer would then be taken for the next one's.
            throw new IOException("the script holds the control shell's end line; it runs as a command instead");
        }
        try {
            in.write((script + (script.endsWith("\n") ? "" : "\n") + END + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
            String answer = answers.poll(bound.toNanos(), TimeUnit.NANOSECONDS);
            if (answer == null || answer == GONE) {
                throw new IOException(answer == null ? "the control shell did not answer within " + bound.toMillis() + " ms"
                        : "the control shell ended");
            }
            return answer;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new InterruptedIOException("interrupted while waiting for the control shell");
        } catch (IOException | RuntimeException e) {
            close();
            throw e instanceof IOException io ? io : new IOException(e);
        }
    }

    /**
     * {@code data} as text the shell's {@code read -r} carries unchanged, when it is: known, at most
     * {@link #MAX_TEXT} bytes, well-formed UTF-8 (it travels as a Java string) without NUL (no shell
     * variable holds one). Empty otherwise, and then it goes through a command of its own.
     */
    public static Optional<String> carriableText(Payload data) throws IOException {
        if (!data.isRepeatable() || data.length().isEmpty() || data.length().getAsLong() > MAX_TEXT) {
            return Optional.empty();
        }
        byte[] bytes;
        try (InputStream in = data.open()) {
            bytes = in.readNBytes(MAX_TEXT + 1);
        }
        if (bytes.length > MAX_TEXT) {
            return Optional.empty();
        }
        for (byte b : bytes) {
            if (b == 0) {
                return Optional.empty();
            }
        }
        try {
            return Optional.of(StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }

    /** The reader thread: each output up to {@code \n@airlock-control:N\n}, without that line, is one answer. */
    private void readAnswers(InputStream out) {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        StringBuilder answer = new StringBuilder();
        try {
            int b;
            while ((b = out.read()) >= 0) {
                if (b != '\n') {
                    line.write(b);
                    if (line.size() + answer.length() > MAX_ANSWER) {
                        break;
                    }
                    continue;
                }
                String l = line.toString(StandardCharsets.UTF_8);
                line.reset();
                if (!l.startsWith(DONE)) {
                    answer.append(l).append('\n');
                    continue;
                }
                // printf put a newline before the status line: it is not the script's.
                int n = answer.length();
                answers.offer(n > 0 && answer.charAt(n - 1) == '\n' ? answer.substring(0, n - 1) : answer.toString());
                answer.setLength(0);
            }
        } catch (IOException e) {
            // ended below
        }
        dead = true;
        answers.offer(GONE);
    }

    /** The shell's stderr is nobody's, but an undrained stream could stall the transport it shares. */
    private static void drain(InputStream err) {
        byte[] buf = new byte[4096];
        try (err) {
            while (err.read(buf) >= 0) {
                // dropped
            }
        } catch (IOException e) {
            // the shell is gone
        }
    }

    /** Ends the shell (end of input) and releases its process. */
    @Override
    public void close() {
        dead = true;
        try {
            in.close();
        } catch (IOException ignored) {
            // released below anyway
        }
        process.release();
    }
}
