package dev.airlock.docker;

import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.DispatchOutcomeUnknownException;
import dev.airlock.spi.OutputPipes;
import dev.airlock.spi.RemoteProcess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One command in the container: a hijacked exec whose multiplexed output a pump thread splits into
 * two bounded pipes (stdout, stderr). Nothing is added to or taken from the command's output here:
 * the core's launcher record (the script's own first line) names the process group, and the exit
 * status comes from the daemon ({@code inspectExec}), never from text the command could print.
 */
final class DockerProcess implements RemoteProcess {
    private static final Logger LOG = LoggerFactory.getLogger(DockerProcess.class);
    private static final int PIPE = 256 * 1024;
    private static final long FIRST_POLL_MILLIS = 50;
    private static final long MAX_POLL_MILLIS = 1000;
    /** Docker closes an ended exec's output after at most 2 s of draining it; a little more than that. */
    private static final long DRAIN_MILLIS = 2500;

    private final DockerDaemon daemon;
    private final String containerId;
    private final String execId;
    private final HijackedExec stream;
    private final OutputPipes output = new OutputPipes(PIPE);
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    private volatile boolean killedByUs;
    private volatile IOException streamFailure;

    private DockerProcess(DockerDaemon daemon, String containerId, String execId, HijackedExec stream) {
        this.daemon = daemon;
        this.containerId = containerId;
        this.execId = execId;
        this.stream = stream;
    }

    /**
     * The exec's command line: the command's shell itself, with no wrapper as its parent (a wrapper
     * of the same user could be killed, stopped or rewritten to report another status). runc makes
     * every exec a session leader, so the shell leads its own process group, as the core's kill needs.
     */
    static List<String> argv(String shell, String script) {
        return List.of(shell, "-c", script);
    }

    /**
     * Starts the exec; returns once the daemon accepted the start. The daemon must answer within
     * {@code startTimeout}: past it whether the command started is unknown, and it is not sent again.
     *
     * @throws IOException when the command did not start
     */
    static DockerProcess start(DockerDaemon daemon, String containerId, String execId, Duration startTimeout)
            throws IOException {
        HijackedExec stream;
        try {
            stream = HijackedExec.start(daemon.address(), execId, startTimeout);
        } catch (HijackedExec.NoAnswer e) {
            throw new DispatchOutcomeUnknownException("the Docker daemon did not answer the start of the command within "
                    + startTimeout.toSeconds() + "s (" + DockerSettings.API_TIMEOUT + ") in container "
                    + DockerDaemon.shortId(containerId) + "; whether it started is unknown, it was not sent again");
        }
        DockerProcess p = new DockerProcess(daemon, containerId, execId, stream);
        Thread pump = new Thread(p::pump, "airlock-docker-exec-" + execId.substring(0, 12));
        pump.setDaemon(true);
        pump.start();
        return p;
    }

    // ---------------------------------------------------------------- the pump

    private void pump() {
        byte[] buf = new byte[64 * 1024];
        IOException failure = null;
        try {
            int type;
            while ((type = stream.nextFrame()) >= 0) {
                long remaining = stream.payloadLength;
                while (remaining > 0) {
                    int n = stream.readPayload(buf, 0, (int) Math.min(buf.length, remaining));
                    remaining -= n;
                    deliver(type == HijackedExec.STDOUT, buf, n);
                }
            }
        } catch (IOException e) {
            failure = e;
        } finally {
            if (failure != null && !stream.isClosed()) {
                LOG.debug("the exec stream of {} broke: {}", execId, failure.getMessage());
                streamFailure = failure;
                output.fail(failure);
            } else {
                output.end();
            }
            ended.complete(null);
        }
    }

    /**
     * Stdout frames to stdout; stderr and Docker's system-error frames to stderr. Where the reader
     * gave up on one output its frames are dropped: the connection is drained on for the other.
     */
    private void deliver(boolean isOut, byte[] b, int len) throws IOException {
        (isOut ? output.out : output.err).offer(b, 0, len);
    }

    // ---------------------------------------------------------------- RemoteProcess

    @Override
    public OutputStream stdin() {
        return stream.stdin();
    }

    @Override
    public InputStream stdout() {
        return output.stdout();
    }

    @Override
    public InputStream stderr() {
        return output.stderr();
    }

    /**
     * The exit status as the daemon records it, asked for when the output ends and, meanwhile,
     * at growing intervals (a background job may hold the output after the command ended, and a
     * command may close its own output and go on running: the output's end is not the exec's). A
     * removed or stopped container is an error; so is a connection that broke while the output
     * came: its status is still waited for, so a timeout or cancel still reaches the command, and
     * then reported with the loss. Nothing is retried.
     */
    @Override
    public int waitFor() throws InterruptedException {
        long poll = FIRST_POLL_MILLIS;
        while (true) {
            boolean streamEnded = ended.isDone();
            if (streamEnded) {
                Thread.sleep(poll);
            } else {
                streamEnded = awaitStreamEnd(poll);
            }
            DockerDaemon.ExecState s = inspect();
            if (s == null) {
                release();
                throw daemon.containerLost(containerId, "while a command ran");
            }
            if (!s.running() && s.exitCode() != null) {
                if (!streamEnded) {
                    // The daemon records the end before it has sent the last output, then closes the
                    // stream within its own drain time: wait that long, so no output passes for whole
                    // while still on its way (a background job holding the output is left to the core).
                    awaitStreamEnd(DRAIN_MILLIS);
                }
                int code = (int) (long) s.exitCode();
                if (code >= 128 && !killedByUs && daemon.diedWithContainer(containerId)) {
                    release();
                    throw daemon.containerLost(containerId, "while a command ran");
                }
                IOException f = streamFailure;
                if (f != null) {
                    release();
                    throw new BackendException("the connection carrying the command's output from the Docker daemon "
                            + "broke (" + f.getMessage() + "); the command ended with exit "
                            + code + " but its output is incomplete; it was not run again");
                }
                return code;
            }
            poll = Math.min(poll * 2, MAX_POLL_MILLIS);
        }
    }

    /** Waits up to {@code millis} for the output to end; returns whether it has. */
    private boolean awaitStreamEnd(long millis) throws InterruptedException {
        try {
            ended.get(millis, TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException("the exec pump failed", e.getCause());
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

    /** Unknown here: the core's launcher record reports the group (runc made the shell a session leader). */
    @Override
    public OptionalLong processGroup() {
        return OptionalLong.empty();
    }

    @Override
    public void release() {
        stream.close();
    }
}
