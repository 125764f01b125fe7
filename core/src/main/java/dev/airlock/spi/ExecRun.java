package dev.airlock.spi;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.CapturedOutput;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.StagingException;
import dev.airlock.event.ExecState;
import dev.airlock.event.ExecTransition;
import dev.airlock.internal.ExecStateMachine;
import dev.airlock.internal.ExecStateMachine.Cause;
import dev.airlock.internal.LaunchRecordStream;
import dev.airlock.shell.Launcher;
import dev.airlock.session.SessionHook;
import dev.airlock.shell.StdinScripts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One exec: its state machine, the cause of its end, its process handle and kill request, and the
 * flow that stages, launches and waits on a worker thread. A timeout or cancel is bounded: before
 * dispatch the flow is interrupted and the caller gets the result once the staged files are gone
 * (or the kill grace plus a second passed); after dispatch the tree is killed and a watchdog ends
 * the exec at the same bound even when a hook is stuck. Every exec ends DONE, CANCELLED or FAILED.
 */
final class ExecRun extends ExecHandle {
    private static final Logger LOG = LoggerFactory.getLogger(ExecRun.class);

    final long execId;
    final ExecRequest request;
    final boolean internal;
    final ExecStateMachine sm;
    private final AbstractEnvironment env;
    private final SessionHook session;
    private final String nonce = Launcher.nonce();
    private final CountDownLatch flowEnded = new CountDownLatch(1);
    private final List<String> staged = new ArrayList<>();
    private final Object threadLock = new Object();
    private final Instant created = Instant.now();
    private Thread flowThread;
    private volatile RemoteProcess process;
    private volatile Reaper.Identity identity;
    private volatile boolean killRequested;
    private volatile boolean exited;
    private volatile ScheduledFuture<?> timeoutTask;
    private volatile CompletableFuture<Void> kill;
    private volatile Capture capture;

    ExecRun(AbstractEnvironment env, long execId, ExecRequest request, boolean internal) {
        this(env, execId, request, internal, null);
    }

    ExecRun(AbstractEnvironment env, long execId, ExecRequest request, boolean internal, SessionHook session) {
        this.session = session;
        this.env = env;
        this.execId = execId;
        this.request = request;
        this.internal = internal;
        this.sm = new ExecStateMachine(new Object(), this::observe);
    }

    private void observe(ExecState from, ExecState to) {
        env.transition(new ExecTransition(env.id(), execId, from, to, internal));
    }

    // ---- the flow, on a worker thread

    void flow() {
        synchronized (threadLock) {
            flowThread = Thread.currentThread();
        }
        ExecResult r = null;
        AirlockException failure = null;
        try {
            r = runFlow();
        } catch (AirlockException e) {
            failure = e;
        } catch (InterruptedException | InterruptedIOException e) {
            failure = new BackendException("the command on " + env.name() + " was interrupted before it finished");
        } catch (IOException | RuntimeException | Error e) {
            failure = new BackendException(env.name() + ": " + e, e);
        } finally {
            synchronized (threadLock) {
                flowThread = null;
            }
            Thread.interrupted(); // a cancel's interrupt belongs to this exec, not to the pooled thread
            removeAllStaged();
            ScheduledFuture<?> t = timeoutTask;
            if (t != null) {
                t.cancel(false);
            }
        }
        if (failure != null) {
            endWith(failure);
        } else {
            deliver(r);
        }
        flowEnded.countDown();
        env.ended(this);
    }

    private ExecResult runFlow() throws IOException, InterruptedException {
        if (!internal) {
            env.beforeCommand(request);
        }
        // The timeout covers staging too: a stuck upload ends as a timeout, never a hang.
        request.timeout().ifPresent(d -> timeoutTask = env.schedule(() -> stop(Cause.TIMEOUT), d));
        if (!sm.toStaging()) {
            return stopResult();
        }
        Launch launch;
        try {
            launch = ExecScript.build(request, commandToSend(), internal, env.capabilities(), env.target(), env.childSet(request),
                    env.childUnset(), env.maxStaged(), nonce, this::stageTracked);
        } catch (IOException e) {
            if (sm.state() == ExecState.CANCELLED) {
                return stopResult();
            }
            throw new StagingException("could not stage " + (internal ? "a file operation's data" : "the command's input")
                    + " on the " + env.name() + " target: " + e.getMessage(), e);
        }
        if (!sm.toStaged() || !sm.toDispatched()) {
            return stopResult();
        }
        return dispatch(launch);
    }

    private ExecResult dispatch(Launch launch) throws InterruptedException {
        Instant began = Instant.now();
        RemoteProcess p;
        try {
            p = env.launch(launch);
        } catch (IOException e) {
            if (sm.cause() != Cause.EXIT) {
                sm.toDone(); // cancelled while it was being started: it did not start
                return stopResult();
            }
            throw new BackendException("could not start the command on " + env.name() + ": " + e.getMessage(), e);
        }
        process = p;
        Capture capture = new Capture(env, request, p, nonce);
        this.capture = capture;
        capture.start();
        if (killRequested) {
            killTree(); // a cancel came while launch ran (or close raced it): the command must not run on
        }
        if (launch.pipeStdin()) {
            // A broken payload: the tree dies before its stdin closes, so no part passes for the whole.
            capture.writeStdin(() -> {
                killTree();
                try {
                    awaitKill();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        } else {
            AbstractEnvironment.closeQuietly(p.stdin());
        }
        ProcessEnd end;
        try {
            end = p.awaitEnd();
        } catch (InterruptedException e) {
            killTree();
            throw e;
        } finally {
            exited = true;
        }
        boolean lost = end instanceof ProcessEnd.Lost;
        if (!lost) {
            sm.toDone(); // the end is decided here: a cancel from now on finds nothing to stop
        }
        awaitKill();
        boolean started = capture.finish(this);
        if (started) {
            synchronized (staged) {
                staged.clear(); // the prefix removed them before the record
            }
        }
        Cause cause = sm.cause();
        boolean stopped = cause == Cause.TIMEOUT || cause == Cause.CANCEL;
        capture.throwFailures(stopped);
        if (lost && !stopped) {
            throw new BackendException("the connection to " + env.name() + " was lost while the command ran;"
                    + " it was not run again (its effects, if any, stand)");
        }
        sm.toDone();
        if (!stopped && !started && end.exitCode() == StdinScripts.STAGING_FAILED) {
            String why = capture.stderrLine();
            throw new StagingException("the staged input could not be opened on the " + env.name()
                    + " target, so the command did not run" + (why.isEmpty() ? "" : ": " + why));
        }
        int code = cause == Cause.TIMEOUT ? ExecResult.EXIT_TIMEOUT : cause == Cause.CANCEL ? ExecResult.EXIT_CANCELLED
                : end.exitCode();
        return new ExecResult(code, capture.stdout(), capture.stderr(), cause == Cause.TIMEOUT, cause == Cause.CANCEL,
                Duration.between(began, Instant.now()));
    }

    // ---- a session's part (see dev.airlock.session): the command it wraps, and the end it is told of

    /** The command as sent: the user's (the guard judged that one), wrapped by the session if there is one. */
    private String commandToSend() {
        return session == null ? request.command() : session.wrap(request.command());
    }

    /** Tells the session its exec ended, before the caller can see that, so its next may start at once. */
    private void sessionEnded() {
        if (session != null) {
            session.ended();
        }
    }

    /** Remembered process identity for the reaper: the backend's own, or the launcher record's. */
    Reaper.Identity identity(LaunchRecordStream.Record record) {
        RemoteProcess p = process;
        java.util.OptionalLong pgid = p.processGroup();
        if (pgid.isEmpty() && record != null) {
            pgid = java.util.OptionalLong.of(record.pid());
        }
        if (pgid.isEmpty()) {
            return null;
        }
        java.util.OptionalLong start = p.startTime();
        if (start.isEmpty() && record != null && record.pid() == pgid.getAsLong()) {
            start = record.startTime();
        }
        return new Reaper.Identity(pgid.getAsLong(), start);
    }

    void recorded(LaunchRecordStream.Record record) {
        if (identity == null) {
            identity = identity(record);
        }
    }

    private ExecResult stopResult() {
        Cause c = sm.cause();
        return new ExecResult(c == Cause.TIMEOUT ? ExecResult.EXIT_TIMEOUT : ExecResult.EXIT_CANCELLED,
                CapturedOutput.empty(), CapturedOutput.empty(), c == Cause.TIMEOUT, c != Cause.TIMEOUT,
                Duration.between(created, Instant.now()));
    }

    private void stageTracked(String path, dev.airlock.Payload data) throws IOException {
        if (sm.state() == ExecState.CANCELLED) {
            throw new InterruptedIOException("cancelled before staging"); // nothing more goes up
        }
        synchronized (staged) {
            staged.add(path);
        }
        env.stage(path, data);
    }

    private void removeAllStaged() {
        List<String> paths;
        synchronized (staged) {
            paths = new ArrayList<>(staged);
            staged.clear();
        }
        for (String path : paths) {
            try {
                env.removeStaged(path);
            } catch (IOException | RuntimeException e) {
                LOG.debug("could not remove staged {}: {}", path, e.getMessage());
            }
        }
    }

    // ---- ends

    private void deliver(ExecResult r) {
        sessionEnded();
        if (result.complete(r) && !internal) {
            env.emit("exec", request.command(), Map.of("exit", r.exitCode(), "timedOut", r.timedOut(),
                    "cancelled", r.cancelled(), "durationMs", r.duration().toMillis(),
                    "stdoutDropped", r.stdoutDropped(), "stderrDropped", r.stderrDropped()));
        }
    }

    /** Ends in FAILED, unless a cancel or timeout ended it first (then that is its result). */
    private void endWith(AirlockException e) {
        sessionEnded();
        if (sm.fail() || sm.cause() == Cause.EXIT) {
            if (result.completeExceptionally(e) && !internal) {
                env.emit("exec", request.command(), Map.of("error", e.kind(), "message", e.getMessage()));
            }
        } else {
            deliver(stopResult());
        }
    }

    // ---- cancel and kill

    @Override
    public void cancel() {
        boolean stoppedSomething = stop(Cause.CANCEL);
        // A sandbox-wide cancel stops the sandbox only when it cancelled something, and never
        // for Airlock's own operations (closing a read stream cancels its internal exec).
        if (stoppedSomething && !internal) {
            env.cancelledBySandboxPolicy();
        }
    }

    /**
     * Stops this exec by cancel, timeout or close: before dispatch it never runs, and this returns
     * once its staged files are gone; after dispatch its process tree is killed. Either way the
     * result arrives within the kill grace plus a second. Returns false when it had already ended.
     */
    boolean stop(Cause why) {
        switch (sm.cancel(why)) {
            case NEVER_DISPATCHED -> {
                interruptFlow();
                awaitQuietly(flowEnded, env.stopBound());
                deliver(stopResult());
                return true;
            }
            case KILL -> {
                killTree();
                env.schedule(this::watchdog, env.stopBound());
                return true;
            }
            default -> {
                return false;
            }
        }
    }

    /** The stop bound passed and the flow is still stuck in a hook: the caller gets the result now. */
    private void watchdog() {
        if (!result.isDone()) {
            sm.toDone();
            deliver(stopResult());
            interruptFlow();
        }
    }

    private void interruptFlow() {
        synchronized (threadLock) {
            if (flowThread != null) {
                flowThread.interrupt();
            }
        }
    }

    /** Kills the tree once; when launch has not returned yet, the flow does it as soon as it does. */
    void killTree() {
        killRequested = true;
        RemoteProcess p = process;
        if (p == null) {
            return; // the flow reads killRequested right after setting process
        }
        synchronized (this) {
            if (kill != null) {
                return;
            }
            kill = new CompletableFuture<>();
        }
        CompletableFuture<Void> k = kill;
        env.runAsync(() -> {
            try {
                Reaper.Identity id = identity;
                if (id == null) {
                    // The record names the group when the backend cannot; it comes before the command runs.
                    Capture c = capture;
                    Duration wait = p.processGroup().isPresent() ? Duration.ZERO : env.stopBound();
                    id = identity(c == null ? null : c.awaitRecord(wait));
                    identity = id;
                }
                env.reaper().terminate(p, id, () -> exited);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                k.complete(null);
            }
        });
    }

    /** No process of a killed exec outlives its result (bounded: the watchdog answers the caller anyway). */
    private void awaitKill() throws InterruptedException {
        CompletableFuture<Void> k = kill;
        if (k == null) {
            return;
        }
        try {
            k.get(env.stopBound().toMillis() + 30_000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("killing a command on {} did not finish: {}", env.name(), e.toString());
        }
    }

    boolean isExited() {
        return exited;
    }

    RemoteProcess process() {
        return process;
    }

    Reaper.Identity knownIdentity() {
        return identity;
    }

    private static void awaitQuietly(CountDownLatch latch, Duration d) {
        try {
            latch.await(d.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
