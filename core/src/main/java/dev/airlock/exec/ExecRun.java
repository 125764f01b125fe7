package dev.airlock.exec;

import dev.airlock.exec.ExecStateMachine.Cause;
import dev.airlock.spi.ProcessEnd;
import dev.airlock.spi.Launch;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.CapturedOutput;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.OutputTransport;
import dev.airlock.StagingException;
import dev.airlock.event.ExecState;
import dev.airlock.event.ExecTransition;
import dev.airlock.session.SessionHook;
import dev.airlock.shell.Launcher;
import dev.airlock.shell.StdinScripts;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One exec: its state machine, the cause of its end, its process handle and kill request, and the
 * flow that stages, launches and waits on a worker thread. A timeout or cancel is bounded: before
 * dispatch the flow is interrupted and the caller gets the result once the staged files are gone
 * (or the stop bound, kill grace plus slack, passed); after dispatch the tree is killed and a watchdog ends
 * the exec at the same bound even when a hook is stuck. Every exec ends DONE, CANCELLED or FAILED.
 */
final class ExecRun extends ExecHandle {
    final long execId;
    final ExecRequest request;
    final boolean internal;
    final ExecStateMachine sm;
    private final CoreEnvironment env;
    private final SessionHook session;
    private final String nonce = Launcher.nonce();
    private final CountDownLatch flowEnded = new CountDownLatch(1);
    private final Object threadLock = new Object();
    private final Instant created = Instant.now();
    /** Set by the first end (result or failure), before its audit event and the caller's result. */
    private final AtomicBoolean ending = new AtomicBoolean();
    private Thread flowThread;
    private final TreeKill kill;
    private final ExecFiles files;
    private volatile boolean dispatched;
    private volatile ScheduledFuture<?> timeoutTask;
    /** Once dispatched: the output so far, which the watchdog hands out if the flow is stuck. */
    private volatile Capture capture;

    ExecRun(CoreEnvironment env, long execId, ExecRequest request, boolean internal) {
        this(env, execId, request, internal, null);
    }

    ExecRun(CoreEnvironment env, long execId, ExecRequest request, boolean internal, SessionHook session) {
        this.session = session;
        this.env = env;
        this.execId = execId;
        this.request = request;
        this.internal = internal;
        this.sm = new ExecStateMachine(new Object(), this::observe);
        this.kill = new TreeKill(env, nonce);
        this.files = new ExecFiles(env, execId);
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
        } catch (Throwable e) {
            // Errors and checked exceptions a hook threw undeclared (OkHttp's sneaky
            // InterruptedException) too: the exec still ends, and its slot and files are released.
            failure = new BackendException(env.name() + ": " + e, e);
        }
        // Every throwable was caught above, and afterFlow never throws, so this runs on every path
        // (written once, not as a finally block, which the compiler copies into each of them).
        afterFlow();
        // Out of the live set before the caller sees the end: a caller that starts its next exec
        // as each returns, holding the bound exactly, is never refused for one that has returned.
        env.ended(this);
        // The session's next exec waits for this one's tree to be gone, not just for its result.
        kill.whenDone(this::sessionEnded);
        env.live().flowEnded(this);
        if (failure != null) {
            endWith(failure);
        } else {
            deliver(r);
        }
        flowEnded.countDown();
    }

    private void afterFlow() {
        synchronized (threadLock) {
            flowThread = null;
        }
        Thread.interrupted(); // a cancel's interrupt belongs to this exec, not to the pooled thread
        files.removeAll(dispatched);
        ScheduledFuture<?> t = timeoutTask;
        if (t != null) {
            t.cancel(false);
        }
    }

    private ExecResult runFlow() throws IOException, InterruptedException {
        if (!internal) {
            env.safety().checkCommand(request);
        }
        // The timeout covers staging too: a stuck upload ends as a timeout, never a hang.
        request.timeout().ifPresent(d -> timeoutTask = env.workers().schedule(() -> stop(Cause.TIMEOUT), d));
        if (!sm.toStaging()) {
            return stopResult();
        }
        OutputFiles outputFiles = env.capabilities().outputTransport() == OutputTransport.FILES ? files.newOutput() : null;
        Launch launch;
        try {
            launch = ExecScript.build(request, commandToSend(), internal, !env.backend().outputEndsAtExit(), env.capabilities(),
                    env.target(), env.shell(),
                    env.childSet(request),
                    env.childUnset(), env.config().maxStaged(), nonce, outputFiles, this::stageTracked);
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
            dispatched = true;
            p = env.hooks().launch(launch);
        } catch (IOException e) {
            if (sm.cause() != Cause.EXIT) {
                sm.toDone(); // cancelled while it was being started: it did not start
                return stopResult();
            }
            throw new BackendException("could not start the command on " + env.name() + ": " + e.getMessage(), e);
        }
        Capture capture = new Capture(env, request, p, nonce, files.output());
        this.capture = capture;
        capture.start();
        kill.launched(p, capture); // a cancel that came while launch ran (or close raced it) kills it now
        if (launch.pipeStdin()) {
            // A broken payload: the tree dies before its stdin closes, so no part passes for the whole.
            capture.writeStdin(() -> {
                kill.request();
                try {
                    kill.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        } else {
            CoreEnvironment.closeQuietly(p.stdin());
        }
        ProcessEnd end;
        try {
            end = p.awaitEnd();
        } catch (InterruptedException e) {
            // Interrupted while the command runs (the watchdog gave the caller its result): the
            // command did not end, so its kill keeps the grace and the group checks of any other.
            kill.request();
            throw e;
        }
        boolean lost = end instanceof ProcessEnd.Lost;
        // Lost with a reason: the sandbox ended under the command, and its processes with it.
        Optional<AirlockException> gone = lost ? p.lostReason() : Optional.empty();
        if (!lost) {
            kill.exited();
            sm.toDone(); // the end is decided here: a cancel from now on finds nothing to stop
        } else if (gone.isEmpty()) {
            // The transport died, not the command, which still runs: kill its group over a fresh
            // connection (the reaper checks the group is still the launched one, and retries,
            // bounded, while the target cannot be reached), so nothing runs on unwatched.
            kill.lost();
            kill.request();
        }
        kill.await();
        boolean started = capture.finish(kill);
        if (started) {
            files.stagedRemovedByTheCommand();
        }
        Cause cause = sm.cause();
        boolean stopped = cause == Cause.TIMEOUT || cause == Cause.CANCEL;
        capture.throwFailures(stopped);
        if (lost && !stopped) {
            throw gone.orElseGet(() -> new BackendException("the connection to " + env.destination()
                    + " was lost while the command ran; it was not run again (its effects, if any, stand)"));
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

    private ExecResult stopResult() {
        return stopResult(CapturedOutput.empty(), CapturedOutput.empty());
    }

    private ExecResult stopResult(CapturedOutput stdout, CapturedOutput stderr) {
        Cause c = sm.cause();
        return new ExecResult(c == Cause.TIMEOUT ? ExecResult.EXIT_TIMEOUT : ExecResult.EXIT_CANCELLED,
                stdout, stderr, c == Cause.TIMEOUT, c != Cause.TIMEOUT, Duration.between(created, Instant.now()));
    }

    private void stageTracked(String path, dev.airlock.Payload data) throws IOException {
        if (sm.state() == ExecState.CANCELLED) {
            throw new InterruptedIOException("cancelled before staging"); // nothing more goes up
        }
        files.stage(path, data);
    }

    // ---- a session's part (see dev.airlock.session): the command it wraps, and the end it is told of

    /** The command as sent: the user's (the guard judged that one), wrapped by the session if there is one. */
    private String commandToSend() {
        return session == null ? request.command() : session.wrap(request.command());
    }

    /**
     * Tells the session its exec ended: its flow ended and its tree is gone (or its kill gave up),
     * or it was never dispatched; before the caller can see the result, unless a slow kill let the
     * watchdog answer first. The session's next exec may start then, and not before.
     */
    private void sessionEnded() {
        if (session != null) {
            session.ended();
        }
    }

    // ---- ends

    /**
     * The first end wins. Its audit event goes out before the caller can see the result: a caller
     * that closes the environment as soon as its exec returns still finds the event (it came after
     * the close, and was lost, when the result went first).
     */
    private void deliver(ExecResult r) {
        if (!ending.compareAndSet(false, true)) {
            return;
        }
        try {
            if (!internal) {
                env.emit("exec", request.command(), Map.of("exit", r.exitCode(), "timedOut", r.timedOut(),
                        "cancelled", r.cancelled(), "durationMs", r.duration().toMillis(),
                        "stdoutDropped", r.stdoutDropped(), "stderrDropped", r.stderrDropped()));
            }
        } finally {
            result.complete(r);
        }
    }

    /** Ends in FAILED, unless a cancel or timeout ended it first (then that is its result). */
    private void endWith(AirlockException e) {
        if (sm.fail() || sm.cause() == Cause.EXIT) {
            if (!ending.compareAndSet(false, true)) {
                return;
            }
            try {
                if (!internal) {
                    env.emit("exec", request.command(), Map.of("error", e.kind(), "message", e.getMessage()));
                }
            } finally {
                result.completeExceptionally(e);
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
     * result arrives within the stop bound (kill grace plus slack). Returns false when it had already ended.
     */
    boolean stop(Cause why) {
        switch (sm.cancel(why)) {
            case NEVER_DISPATCHED -> {
                interruptFlow();
                awaitQuietly(flowEnded, env.config().stopBound());
                givePlaceBack();
                sessionEnded(); // nothing was dispatched: no shell of this exec runs
                deliver(stopResult());
                return true;
            }
            case KILL -> {
                kill.request();
                env.workers().schedule(this::watchdog, env.config().stopBound());
                return true;
            }
            default -> {
                return false;
            }
        }
    }

    /**
     * The stop bound passed and the flow is still stuck in a hook: the caller gets the result now,
     * with the output captured so far (the kill goes on in the background).
     */
    private void watchdog() {
        if (!result.isDone()) {
            sm.toDone();
            givePlaceBack();
            Capture c = capture;
            if (c == null) {
                deliver(stopResult());
            } else {
                Capture.SoFar out = c.soFar();
                deliver(stopResult(out.stdout(), out.stderr()));
            }
            interruptFlow();
            // The flow tells the session once the kill is done; should it stay stuck, the session
            // gives up on this exec when the kill's own bound has passed.
            env.workers().schedule(this::sessionEnded, kill.bound());
        }
    }

    /**
     * For close: waits until a dispatched exec's flow ended (its launch returned: a launch in
     * flight may still start the command) and its kill is done, until {@code by}. Returns whether
     * it settled; an exec never dispatched starts nothing, so it is not waited on.
     */
    boolean awaitSettled(dev.airlock.spi.Deadline by) {
        ExecState s = sm.state();
        if (!dispatched && s != ExecState.DISPATCHED && s != ExecState.KILLING && s != ExecState.DONE) {
            return true; // CANCELLED or FAILED before dispatch, or not there yet (the stop makes sure it never is)
        }
        synchronized (threadLock) {
            if (flowThread == Thread.currentThread()) {
                return false; // closed from this exec's own flow (a listener): it cannot wait for itself
            }
        }
        awaitQuietly(flowEnded, by.remaining());
        if (flowEnded.getCount() > 0) {
            return false;
        }
        CountDownLatch killed = new CountDownLatch(1);
        kill.whenDone(killed::countDown);
        awaitQuietly(killed, by.remaining());
        return killed.getCount() == 0;
    }

    /**
     * The caller gets a stop's result while the flow may still be stuck in a hook that ignores its
     * interrupt (a caller's own stdin stream, read while staging): the exec leaves the live set
     * with that result, so stuck flows never refuse the next exec. The flow's thread is held until
     * the hook returns; the flow then cleans up as usual.
     */
    private void givePlaceBack() {
        env.ended(this);
    }

    private void interruptFlow() {
        synchronized (threadLock) {
            if (flowThread != null) {
                flowThread.interrupt();
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch, Duration d) {
        try {
            latch.await(d.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
