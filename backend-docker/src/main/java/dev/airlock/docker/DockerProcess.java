package dev.airlock.docker;

import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.DispatchOutcomeUnknownException;
import dev.airlock.spi.BlockingPipe;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.RemoteProcess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One command in the container: a hijacked exec whose multiplexed output a pump thread splits into
 * two bounded pipes (stdout, stderr).
 *
 * <p>The command runs under a small wrapper that writes two lines of its own to stdout, both
 * stripped here: a header with its process id and group before the command starts (so
 * {@link #processGroup()} is known when {@link DockerEnvironment#launch} returns and the core's
 * process-group kill works; Docker has no exec kill), and a trailer with the exit status, tagged
 * with a random token, after the command ends. A stream that ends without the trailer was cut, or
 * the wrapper was killed: the output is then reported incomplete instead of passing for whole, and
 * no exit status is polled for while all is well.
 */
final class DockerProcess implements RemoteProcess {
    private static final Logger LOG = LoggerFactory.getLogger(DockerProcess.class);
    private static final String HEADER = "\u0001airlock-exec ";
    private static final int PIPE = 256 * 1024;
    private static final int EARLY_STDERR = 8 << 20;
    private static final long MAX_POLL_MILLIS = 1000;

    /**
     * {@code sh -c WRAPPER airlock WRAPPER TOKEN SHELL SCRIPT}. Docker's runc makes every exec a
     * session leader, so its group is {@code $$}; under a runtime that does not, the wrapper runs
     * itself again under {@code setsid} (which does not fork for a non-leader, so {@code $$} stays).
     * The command is a child, not exec'd, so the wrapper can report its status afterwards.
     */
    static final String WRAPPER = String.join("\n",
            "g=; read -r _ _ _ _ g _ < /proc/$$/stat 2>/dev/null",
            "if [ \"$g\" != \"$$\" ] && command -v setsid >/dev/null 2>&1; then exec setsid sh -c \"$1\" \"$0\" \"$@\"; fi",
            "printf '\\001airlock-exec %s %s\\n' \"$$\" \"$g\"",
            "\"$3\" -c \"$4\"",
            "s=$?",
            "printf '\\001airlock-exit-%s %s\\n' \"$2\" \"$s\"",
            "exit \"$s\"",
            "");

    private final DockerDaemon daemon;
    private final String containerId;
    private final String execId;
    private final HijackedExec stream;
    private final BlockingPipe out = new BlockingPipe(PIPE);
    private final BlockingPipe err = new BlockingPipe(PIPE);
    private final InputStream outSource = out.source(() -> { });
    private final InputStream errSource = err.source(() -> { });
    private final CompletableFuture<long[]> header = new CompletableFuture<>();
    private final CompletableFuture<Integer> trailer = new CompletableFuture<>();
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    private final TrailerFilter filter;
    private final ByteArrayOutputStream early = new ByteArrayOutputStream();
    private volatile long pgid = -1;
    private volatile boolean killedByUs;
    private volatile IOException streamFailure;
    private boolean outDiscard;
    private boolean errDiscard;

    private DockerProcess(DockerDaemon daemon, String containerId, String execId, HijackedExec stream, String token) {
        this.daemon = daemon;
        this.containerId = containerId;
        this.execId = execId;
        this.stream = stream;
        this.filter = new TrailerFilter(("\u0001airlock-exit-" + token + " ").getBytes(StandardCharsets.US_ASCII));
    }

    /** A fresh token for {@link #argv}; the trailer carrying it is the command's end. */
    static String newToken() {
        return StdinScripts.randomToken();
    }

    /** The exec's command line: the wrapper, then the shell and script the core asked for. */
    static List<String> argv(String token, String shell, String script) {
        return List.of("sh", "-c", WRAPPER, "airlock", WRAPPER, token, shell, script);
    }

    /**
     * Starts the exec and returns once the wrapper has reported the process group.
     *
     * @throws IOException when the command did not start
     */
    static DockerProcess start(DockerDaemon daemon, String containerId, String execId, String token, Duration startTimeout)
            throws IOException {
        HijackedExec stream = HijackedExec.start(daemon.host(), execId, startTimeout);
        DockerProcess p = new DockerProcess(daemon, containerId, execId, stream, token);
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
                    if (off == n) {
                        continue;
                    }
                    if (type == HijackedExec.STDOUT) {
                        filter.accept(buf, off, n - off);
                    } else {
                        deliver(type, buf, off, n - off);
                    }
                }
            }
            filter.flush();
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
                streamFailure = failure;
                out.fail(failure);
                err.fail(failure);
            } else {
                out.end();
                err.end();
            }
            ended.complete(null);
        }
    }

    /** Consumes the wrapper's header from the front of stdout; returns where the command's own bytes start. */
    private int headerBytes(byte[] buf, int n, StringBuilder line) throws IOException {
        for (int i = 0; i < n; i++) {
            if (buf[i] == '\n') {
                String s = line.toString();
                if (!s.startsWith(HEADER)) {
                    throw new IOException("unexpected output before the command started: " + s.strip());
                }
                String[] f = s.substring(HEADER.length()).trim().split(" ");
                // Docker copies stdout and stderr on separate routines: stderr may overtake the
                // header. What came early goes out first, once the header is in.
                header.complete(new long[] {parse(f, 0), parse(f, 1)});
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
        if (len == 0) {
            return;
        }
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

    /**
     * Passes stdout through, holding back only bytes that may be the start of the trailer
     * ({@code \001airlock-exit-TOKEN STATUS\n}); the trailer itself completes {@link #trailer}.
     * The marker's first byte occurs nowhere else in it, so a mismatch can restart at the
     * current byte without backtracking.
     */
    private final class TrailerFilter {
        private final byte[] marker;
        private final ByteArrayOutputStream held = new ByteArrayOutputStream();
        private int matched;
        private int digits;
        private int status;

        TrailerFilter(byte[] marker) {
            this.marker = marker;
        }

        void accept(byte[] b, int off, int len) throws IOException {
            if (trailer.isDone()) {
                deliver(HijackedExec.STDOUT, b, off, len); // a background process writing after the end
                return;
            }
            int start = off;
            int end = off + len;
            for (int i = off; i < end; i++) {
                byte c = b[i];
                if (matched == 0) {
                    if (c == marker[0]) {
                        deliver(HijackedExec.STDOUT, b, start, i - start);
                        held.write(c);
                        matched = 1;
                        start = i + 1;
                    }
                    continue;
                }
                if (matched < marker.length && c == marker[matched]) {
                    held.write(c);
                    matched++;
                    start = i + 1;
                } else if (matched == marker.length && c >= '0' && c <= '9' && digits < 3) {
                    held.write(c);
                    status = status * 10 + (c - '0');
                    digits++;
                    start = i + 1;
                } else if (matched == marker.length && c == '\n' && digits > 0) {
                    held.reset();
                    matched = 0;
                    trailer.complete(status);
                    if (i + 1 < end) {
                        deliver(HijackedExec.STDOUT, b, i + 1, end - i - 1);
                    }
                    return;
                } else {
                    flush();
                    start = i;
                    i--; // look at this byte again from the start of the marker
                }
            }
            deliver(HijackedExec.STDOUT, b, start, end - start);
        }

        /** Gives back held bytes that turned out not to be the trailer. */
        void flush() throws IOException {
            if (held.size() > 0) {
                byte[] h = held.toByteArray();
                deliver(HijackedExec.STDOUT, h, 0, h.length);
                held.reset();
            }
            matched = 0;
            digits = 0;
            status = 0;
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
     * The status from the trailer. Without one, the daemon is asked: a removed or stopped
     * container is an error; a command Airlock killed has its signal status; any other end without
     * a trailer means the output did not all arrive, which is an error too (after the command
     * ended, so a timeout or cancel still reaches it). Nothing is retried.
     */
    @Override
    public int waitFor() throws InterruptedException {
        try {
            CompletableFuture.anyOf(trailer, ended).get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("the exec pump failed", e.getCause());
        }
        if (trailer.isDone()) {
            return trailer.join();
        }
        boolean cut = false;
        long sleep = 5;
        while (true) {
            DockerDaemon.ExecState s = inspect();
            if (s == null) {
                release();
                throw daemon.containerLost(containerId, "while a command ran");
            }
            if (!s.running() && s.exitCode() != null) {
                int code = (int) (long) s.exitCode();
                if (killedByUs) {
                    return code;
                }
                if (daemon.diedWithContainer(containerId)) {
                    release();
                    throw daemon.containerLost(containerId, "while a command ran");
                }
                if (!cut && streamFailure == null && code >= 128) {
                    return code; // the command killed its own wrapper (e.g. kill 0): its output ended with it
                }
                release();
                IOException f = streamFailure;
                throw new BackendException("the connection carrying the command's output from the Docker daemon "
                        + (f != null ? "broke (" + f.getMessage() + ")" : "was cut") + "; the command ended with exit " + code
                        + " but its output is incomplete; it was not run again");
            }
            // Still running although its output stream ended: the connection was cut.
            cut = true;
            Thread.sleep(sleep);
            sleep = Math.min(sleep * 2, MAX_POLL_MILLIS);
        }
    }

    /** The exec's state; a read-only call, so asked once more on a fresh connection before failing. */
    private DockerDaemon.ExecState inspect() throws InterruptedException {
        try {
            return daemon.inspectExec(execId);
        } catch (BackendUnavailableException first) {
            Thread.sleep(100);
            try {
                return daemon.inspectExec(execId);
            } catch (BackendUnavailableException e) {
                release();
                throw e;
            }
        }
    }

    /** Notes that Airlock signals this command, so its signal exit is its own, not a dying container's. */
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
