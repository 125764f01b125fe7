package dev.airlock.exec;

import dev.airlock.AirlockException;
import dev.airlock.Target;
import dev.airlock.containment.StateWitness;
import dev.airlock.shell.Shell;
import dev.airlock.spi.ControlShell;
import dev.airlock.spi.Deadline;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Closing an environment, exactly once however many threads race (close, a sandbox-wide cancel,
 * the JVM's shutdown hook): end the native writes in flight, cancel the live execs in parallel,
 * kill what lingers, remove the private dir, end the control shell, stop the sandbox, free the threads. Every later closer waits for the first.
 */
final class Lifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(Lifecycle.class);
    /** The most stopping the sandbox may take before close goes on without it. */
    private static final java.time.Duration STOP_SANDBOX_BOUND = java.time.Duration.ofMinutes(2);

    private final CoreEnvironment env;
    private final StopOnce stopOnce;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook;

    Lifecycle(CoreEnvironment env, String hookName) {
        this.env = env;
        this.stopOnce = new StopOnce(this::stopNow);
        this.shutdownHook = new Thread(this::closeFromHook, hookName);
    }

    void registerShutdownHook() {
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** The hook the JVM holds while this environment is open (for tests: close must let go of it). */
    Thread shutdownHook() {
        return shutdownHook;
    }

    boolean isClosed() {
        return closed.get();
    }

    void close() {
        if (!closed.compareAndSet(false, true)) {
            stopOnce.stop(); // a second closer waits for the first to finish
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException | IllegalArgumentException ignored) {
            // the JVM is already shutting down (this close is the hook's), or the hook was never added
        }
        stopOnce.stop();
    }

    /**
     * The JVM's shutdown hook: closes, and when a close is already running on another thread waits
     * for it, so containers and remote processes are not left behind.
     */
    void closeFromHook() {
        closed.set(true);
        stopOnce.stop();
    }

    /** A sandbox-wide cancel: stops everything once, in the background (the canceller returns at once). */
    void stopFromCancel() {
        if (!stopOnce.isStopped()) {
            env.workers().runAsync(stopOnce::stop);
        }
    }

    private void stopNow() {
        // Native writes first: one blocked on its caller's source would otherwise outlive the close
        // with its temp file, where the shell path's write (a command) is killed below.
        env.nativeWrites().abortAll(env.config().stopBound().toNanos());
        List<ExecRun> runs = env.live().stop();
        for (ExecRun r : runs) {
            // In parallel: each stop is bounded by the stop bound, and so is the sum.
            env.workers().runAsync(() -> r.stop(ExecStateMachine.Cause.CANCEL));
        }
        Deadline answered = Deadline.in(env.config().stopBound().plusSeconds(2));
        for (ExecRun r : runs) {
            r.awaitResultQuietly(answered.remaining().toNanos());
        }
        // A result can come (at the stop bound) while a launch is still in flight: close returns
        // only once it returned and what it started was killed, within the kill's own bound.
        Deadline settled = Deadline.in(env.config().stopBound().plusSeconds(30));
        for (ExecRun r : env.live().unsettled()) {
            if (!r.awaitSettled(settled)) {
                LOG.warn("a command on {} was still being started or killed when {} closed; it is killed when it returns",
                        env.name(), env.id());
            }
        }
        // Tried again while it fails, within the stop bound each: one transient failure at close
        // must not leave a tree running.
        env.live().drainLingering((p, id) -> env.reaper().forceKill(p, id, env.config().stopBound()));
        Target t = env.probedTarget();
        if (t != null && !env.hooks().removePrivateDir(t.privateDir())) {
            try {
                env.runRaw(removeTree(t.privateDir()), null);
            } catch (IOException | AirlockException e) {
                LOG.debug("could not remove the private dir {}: {}", t.privateDir(), e.getMessage());
            }
        }
        env.corePorts().closeAll();
        env.backend().controlShell().ifPresent(ControlShell::close);
        try {
            env.backend().stopSandbox(Deadline.in(STOP_SANDBOX_BOUND));
        } catch (RuntimeException e) {
            LOG.warn("stopping the {} sandbox {} failed: {}", env.name(), env.id(), e.getMessage());
        }
        try {
            env.backend().close();
        } catch (RuntimeException e) {
            LOG.warn("closing the {} backend {} failed: {}", env.name(), env.id(), e.getMessage());
        }
        // Last, when no command of this environment runs any more: what they changed of Airlock's state is put back.
        env.stateWitness().ifPresent(StateWitness::undoChanges);
        env.emit("close", env.id(), Map.of());
        env.workers().shutdown();
        env.spills().deletePending();
        env.listeners().close();
    }

    /**
     * {@code rm -rf} of the private dir, and where it fails, the same after giving the owner rwx on
     * every directory in it: a user who is not root cannot empty a directory a command left without
     * write or search permission ({@code chmod 000}), so the private dir would outlive close. {@code
     * chmod -R} follows no link it meets inside; a link at the top is removed by the first {@code rm}.
     */
    static String removeTree(String dir) {
        String q = Shell.quotePath(dir);
        return "rm -rf -- " + q + " 2>/dev/null || { chmod -R u+rwx -- " + q + " 2>/dev/null; rm -rf -- " + q + "; }\n";
    }
}
