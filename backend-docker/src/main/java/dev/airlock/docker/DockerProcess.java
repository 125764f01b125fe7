package dev.airlock.docker;

import dev.airlock.BackendUnavailableException;
import dev.airlock.DispatchOutcomeUnknownException;
import dev.airlock.internal.BlockingPipe;
import dev.airlock.spi.RemoteProcess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One command in the container: a hijacked exec whose multiplexed output a pump thread splits into
 * two bounded pipes (stdout, stderr). Before the command runs, a one-line wrapper reports its
 * process id and group on stdout; the pump strips that line, so {@link #processGroup()} is known
 * when {@link DockerEnvironment#launch} returns and the core's process-group kill works (Docker
 * has no exec kill).
 */
final class DockerProcess implements RemoteProcess {
    private static final Logger LOG = LoggerFactory.getLogger(DockerProcess.class);
    private static final String MARK = "\u0001airlock-exec ";
    private static final int PIPE = 256 * 1024;
    private static final int EARLY_STDERR = 8 << 20;
    private static final long MAX_POLL_MILLIS = 1000;

    /**
     * Runs {@code "$1" -c "$2"} after reporting {@code $$} and its process group. Docker's runc
     * makes every exec a session leader, so the group is {@code $$}. A runtime that does not gets
     * {@code setsid} (no fork: the shell is then not a group leader); without setsid the group is
     * reported as it is and the Java side declines to kill a group it does not own.
     */
    static final String WRAPPER = String.join("\n",
            "g=; read -r _ _ _ _ g _ < /proc/$$/stat 2>/dev/null",
            "if [ \"$g\" != \"$$\" ] && command -v setsid >/dev/null 2>&1; then",
            "  printf '\\001airlock-exec %s %s\\n' \"$$\" \"$$\"; exec setsid \"$1\" -c \"$2\"",
            "fi",
            "printf '\\001airlock-exec %s %s\\n' \"$$\" \"$g\"",
            "exec \"$1\" -c \"$2\"");

    private final DockerDaemon daemon;
    private final String containerId;
    private final String execId;
    private final HijackedExec stream;
    private final BlockingPipe out = new BlockingPipe(PIPE);
    private final BlockingPipe err = new BlockingPipe(PIPE);
    private final InputStream outSource = out.source(() -> { });
    private final InputStream errSource = err.source(() -> { });
    private final CompletableFuture<long[]> header = new CompletableFuture<>();
    private final ByteArrayOutputStream early = new ByteArrayOutputStream();
    private final CountDownLatch ended = new CountDownLatch(1);
    private volatile long pgid = -1;
    private volatile boolean killedByUs;
    private boolean outDiscard;
    private boolean errDiscard;

    private DockerProcess(DockerDaemon daemon, String containerId, String execId, HijackedExec stream) {
        this.daemon = daemon;
        this.containerId = containerId;
        this.execId = execId;
        this.stream = stream;
    }

    /**
     * Starts the exec and returns once the wrapper has reported the process group.
     *
     * @throws IOException when the command did not start
     */
    static DockerProcess start(DockerDaemon daemon, String containerId, String execId, Duration startTimeout) throws IOException {
        HijackedExec stream = HijackedExec.start(daemon.host(), execId, startTimeout);
        DockerProcess p = new DockerProcess(daemon, containerId, execId, stream);
        Thread pump = new Thread(p::pump, "airlock-docker-exec-" + execId.substring(0, 12));
        pump.setDaemon(true);
        pump.start();
        long[] ids;
        try {
            ids = p.header.get(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            stream.close();
            Thread.currentThread().interrupt();
            throw new DispatchOutcomeUnknownException("interrupted while the command was starting in container "
                    + DockerDaemon.shortId(containerId) + "; whether it started is unknown, it was not sent again");
        } catch (TimeoutException e) {
            stream.close();
            throw new DispatchOutcomeUnknownException("the command did not report its start within " + startTimeout.toSeconds()
                    + "s (" + DockerSettings.API_TIMEOUT + ") in container " + DockerDaemon.shortId(containerId)
                    + "; whether it started is unknown, it was not sent again");
        } catch (ExecutionException e) {
            stream.close();
            Throwable c = e.getCause();
            throw c instanceof IOException io ? io : new IOException(String.valueOf(c), c);
        }
        if (ids[0] == ids[1] && ids[1] > 1) {
            p.pgid = ids[1];
        } else {
            LOG.warn("the exec in container {} is not a process-group leader (pid {}, group {}) and the image has no setsid;"
                    + " a timeout or cancel cannot kill it", DockerDaemon.shortId(containerId), ids[0], ids[1]);
        }
        return p;
    }

    // ---------------------------------------------------------------- the pump

    private void pump() {
        byte[] buf = new byte[64 * 1024];
        StringBuilder line = new StringBuilder();
        IOException failure = null;
        try {
            int type;
            while ((type = stream.nextFrame()) >= 0) {
                long remaining = stream.payloadLength;
                while (remaining > 0) {
                    int n = stream.readPayload(buf, 0, (int) Math.min(buf.length, remaining));
                    remaining -= n;
                    int off = 0;
                    if (type == HijackedExec.STDOUT && !header.isDone()) {
                        off = headerBytes(buf, n, line);
                    }
                    if (off < n) {
                        deliver(type, buf, off, n - off);
                    }
                }
            }
        } catch (IOException e) {
            failure = e;
        } finally {
            if (!header.isDone()) {
                String why = early.toString(StandardCharsets.UTF_8).strip();
                if (why.length() > 300) {
                    why = why.substring(0, 300);
                }
                header.completeExceptionally(new IOException("the command did not start in container "
                        + DockerDaemon.shortId(containerId) + (why.isEmpty() ? (failure != null ? ": " + failure.getMessage() : "")
                        : ": " + why.lines().findFirst().orElse(""))));
            }
            if (failure != null && !stream.isClosed()) {
                LOG.debug("the exec stream of {} broke: {}", execId, failure.getMessage());
                out.fail(failure);
                err.fail(failure);
            } else {
                out.end();
                err.end();
            }
            ended.countDown();
        }
    }

    /** Consumes the wrapper's line from the front of stdout; returns where the command's own bytes start. */
    private int headerBytes(byte[] buf, int n, StringBuilder line) throws IOException {
        for (int i = 0; i < n; i++) {
            if (buf[i] == '\n') {
                String s = line.toString();
                if (!s.startsWith(MARK)) {
                    throw new IOException("unexpected output before the command started: " + s.strip());
                }
                String[] f = s.substring(MARK.length()).trim().split(" ");
                long pid = parse(f, 0);
                long group = parse(f, 1);
                // Docker copies stdout and stderr on separate routines: stderr may overtake the
                // header. What came early goes out first, once the header is in.
                header.complete(new long[] {pid, group});
                byte[] e = early.toByteArray();
                early.reset();
                if (e.length > 0) {
                    deliver(HijackedExec.STDERR, e, 0, e.length);
                }
                return i + 1;
            }
            line.append((char) (buf[i] & 0xff));
            if (line.length() > 200) {
                throw new IOException("unexpected output before the command started: " + line.toString().strip());
            }
        }
        return n;
    }

    private static long parse(String[] f, int i) {
        try {
            return f.length > i ? Long.parseLong(f[i]) : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private void deliver(int type, byte[] b, int off, int len) throws IOException {
        if (type != HijackedExec.STDOUT && !header.isDone()) {
            // Held until the header arrives (launch waits for it, so nobody reads the pipes yet);
            // also the error message when the command never starts.
            if (early.size() + len > EARLY_STDERR) {
                throw new IOException("more than " + EARLY_STDERR + " bytes of stderr arrived before the command reported its start");
            }
            early.write(b, off, len);
            return;
        }
        boolean isOut = type == HijackedExec.STDOUT;
        if (isOut ? outDiscard : errDiscard) {
            return;
        }
        try {
            (isOut ? out.sink : err.sink).write(b, off, len);
        } catch (IOException e) {
            // The reader gave up on this stream: keep draining the connection for the other one.
            if (isOut) {
                outDiscard = true;
            } else {
                errDiscard = true;
            }
        }
    }

    // ---------------------------------------------------------------- RemoteProcess

    @Override
    public OutputStream stdin() {
        return stream.stdin();
    }

    @Override
    public InputStream stdout() {
        return outSource;
    }

    @Override
    public InputStream stderr() {
        return errSource;
    }

    /**
     * The exit status from the daemon once the exec is no longer running. The stream's end is the
     * usual signal; a background process can hold the stream open after the command exited, so the
     * daemon is also polled, backing off to once a second. A container that vanished is an error,
     * reported once: nothing is retried.
     */
    @Override
    public int waitFor() throws InterruptedException {
        long sleep = 5;
        long streamEndedAt = -1;
        while (true) {
            boolean streamEnded = ended.await(sleep, TimeUnit.MILLISECONDS);
            DockerDaemon.ExecState s;
            try {
                s = daemon.inspectExec(execId);
            } catch (BackendUnavailableException e) {
                release();
                throw e;
            }
            if (s == null) {
                release();
                throw daemon.containerLost(containerId, "while a command ran");
            }
            if (!s.running() && s.exitCode() != null) {
                int code = (int) (long) s.exitCode();
                if (code >= 128 && !killedByUs && daemon.diedWithContainer(containerId)) {
                    release();
                    throw daemon.containerLost(containerId, "while a command ran");
                }
                return code;
            }
            if (streamEnded) {
                if (streamEndedAt < 0) {
                    streamEndedAt = System.nanoTime();
                } else if (System.nanoTime() - streamEndedAt > TimeUnit.SECONDS.toNanos(2) && daemon.diedWithContainer(containerId)) {
                    release();
                    throw daemon.containerLost(containerId, "while a command ran");
                }
                sleep = Math.min(sleep * 2, 100);
                Thread.sleep(sleep); // the daemon records the exit just after the stream ends
            } else {
                sleep = Math.min(sleep * 2, MAX_POLL_MILLIS);
            }
        }
    }

    /** Notes that Airlock signals this command, so its signal exit is not taken for a dying container. */
    void markKilled() {
        killedByUs = true;
    }

    @Override
    public OptionalLong processGroup() {
        return pgid > 1 ? OptionalLong.of(pgid) : OptionalLong.empty();
    }

    @Override
    public void release() {
        stream.close();
    }
}
