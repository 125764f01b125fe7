package dev.airlock.docker;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One {@code sh} kept running in the container for the core's group reads and signals, so that a
 * timeout's kill costs a line each way instead of a new exec per step. A new exec is slow on
 * podman (about 150 ms idle, over 2 s at times under load): the kill's two to four execs could
 * then outlast the stop bound,
 * the caller had the timed-out result while the SIGKILL was still to come, and a hook interrupted
 * at its deadline left the tree's TERM-ignoring grandchild running.
 *
 * <p>Each request is our own script (numbers only, never user text), then the line {@link #END};
 * the shell runs it in a subshell and answers with its output and {@code @airlock-control:STATUS}.
 * Once the shell fails or ends (a command may kill it) it is {@link #dead()} and the caller falls
 * back to an exec per script.
 */
final class ControlShell implements AutoCloseable {
    static final String END = "@airlock-run";
    private static final String DONE = "@airlock-control:";
    private static final int MAX_ANSWER = 64 * 1024;
    /** Builtins and a /proc scan answer in milliseconds; past this the shell is taken for gone. */
    static final long ANSWER_MILLIS = 500;
    /** What the reader offers when the shell's output ended. */
    private static final String GONE = new String("gone for good");

    /** Reads scripts up to {@link #END}, runs each in a subshell, answers; ends at end of input. */
    static final String LOOP = "while :; do s=; l=\n"
            + "while IFS= read -r l; do [ \"$l\" = " + END + " ] && break; s=\"$s$l\n\"; done\n"
            + "[ \"$l\" = " + END + " ] || exit 0\n"
            + "(eval \"$s\") </dev/null 2>/dev/null\n"
            + "printf '\\n" + DONE + "%s\\n' \"$?\"\n"
            + "done\n";

    private final DockerProcess process;
    private final OutputStream in;
    private final InputStream out;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private volatile boolean dead;

    private ControlShell(DockerProcess process) {
        this.process = process;
        this.in = process.stdin();
        this.out = process.stdout();
    }

    /** Starts the shell in container {@code cid}, and the thread that reads its answers. */
    static ControlShell start(DockerDaemon daemon, String cid, Duration apiTimeout) throws IOException {
        String execId = daemon.createExec(cid, DockerProcess.argv("sh", LOOP), Map.of(), true);
        ControlShell c = new ControlShell(DockerProcess.start(daemon, cid, execId, apiTimeout));
        Thread reader = new Thread(c::readAnswers, "airlock-docker-control-" + execId.substring(0, 12));
        reader.setDaemon(true);
        reader.start();
        return c;
    }

    boolean dead() {
        return dead;
    }

    /**
     * Runs {@code script} and returns its stdout. No answer within {@link #ANSWER_MILLIS} (the
     * shell was killed, and its exec's stream may stay open), an interrupt (the hook's deadline) or
     * a broken stream makes it dead for good: a late answer cannot be told from the next one.
     */
    synchronized String run(String script) throws IOException {
        if (dead) {
            throw new IOException("the control shell ended");
        }
        try {
            in.write((script + (script.endsWith("\n") ? "" : "\n") + END + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
            String answer = answers.poll(ANSWER_MILLIS, TimeUnit.MILLISECONDS);
            if (answer == null || answer == GONE) {
                throw new IOException("the control shell did not answer within " + ANSWER_MILLIS + " ms");
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

    /** The reader thread: each output up to {@code \n@airlock-control:N\n}, without that line, is one answer. */
    private void readAnswers() {
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

    /** Ends the shell (end of input) and its exec's connection. */
    @Override
    public void close() {
        dead = true;
        try {
            in.close();
        } catch (IOException ignored) {
            // the connection is released below anyway
        }
        process.release();
    }
}
