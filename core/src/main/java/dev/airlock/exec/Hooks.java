package dev.airlock.exec;

import dev.airlock.Payload;
import dev.airlock.shell.Shell;
import dev.airlock.spi.Backend;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.GroupState;
import dev.airlock.spi.Killer;
import dev.airlock.spi.Launch;
import dev.airlock.spi.RawResult;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.spi.Stager;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledFuture;

/**
 * The backend's hooks as the core calls them: each with its deadline, and the backend's native
 * stager and killer where it has them, else the core's {@link ScriptHooks} (scripts through the
 * control shell or {@link Backend#launch}).
 */
final class Hooks {
    /** The most any single hook may take before the core gives up on it (a timeout or cancel bounds it sooner). */
    static final Duration HOOK_BOUND = Duration.ofMinutes(10);

    private final Backend backend;
    private final RawRuns raw;
    private final ScriptHooks scripts;
    private final Stager stager;
    private final Killer killer;
    private final boolean killsWithoutGroup;
    private final Duration killBound;
    private final Workers workers;

    Hooks(Backend backend, RawRuns raw, Duration killBound, Workers workers) {
        this.backend = backend;
        this.raw = raw;
        this.scripts = new ScriptHooks(backend, raw);
        this.stager = backend.stager().orElse(scripts);
        this.killer = backend.killer().orElse(scripts);
        this.killsWithoutGroup = backend.killer().map(Killer::killsWithoutGroup).orElse(false);
        this.killBound = killBound;
        this.workers = workers;
    }

    /** A hook's body, given its deadline. */
    private interface Body<T> {
        T run(Deadline deadline) throws IOException;
    }

    /**
     * Runs a hook and interrupts its thread if it is still running at its deadline: the core
     * never waits on a hook past it. The interrupt can only land while the hook runs.
     */
    private <T> T bounded(Duration bound, Body<T> body) throws IOException {
        Deadline deadline = Deadline.in(bound);
        Thread caller = Thread.currentThread();
        Object lock = new Object();
        boolean[] done = {false};
        ScheduledFuture<?> alarm = workers.alarm(() -> {
            synchronized (lock) {
                if (!done[0]) {
                    caller.interrupt();
                }
            }
        }, bound);
        try {
            return body.run(deadline);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            // A checked exception the hook did not declare (OkHttp throws InterruptedException
            // sneakily when its deadline's interrupt lands): as the IOException every caller handles.
            throw undeclared(e);
        } finally {
            disarm(lock, done, alarm);
        }
    }

    /** The backend's save of the sandbox's files ({@link Backend#snapshot}), within {@code bound}. */
    String snapshot(String privateDir, Duration bound) throws IOException {
        return bounded(bound, d -> backend.snapshot(privateDir, d));
    }

    private static IOException undeclared(Exception e) {
        IOException io = e instanceof InterruptedException
                ? new java.io.InterruptedIOException("the hook was interrupted: " + e.getMessage())
                : new IOException("the hook failed: " + e);
        io.initCause(e);
        return io;
    }

    /** The hook ended: its alarm must not interrupt the caller any more (null: the environment was closed, no alarm). */
    private static void disarm(Object lock, boolean[] done, ScheduledFuture<?> alarm) {
        synchronized (lock) {
            done[0] = true;
        }
        if (alarm != null) {
            alarm.cancel(false);
        }
    }

    /** The backend's own answer to the probe, within its deadline; empty (the script runs) when it has none or failed. */
    Optional<byte[]> probe(String base, java.util.Set<String> unset) {
        try {
            return bounded(HOOK_BOUND, d -> backend.probe(base, unset, d));
        } catch (IOException | RuntimeException e) {
            Thread.interrupted(); // a deadline's interrupt must not end the script that runs instead
            return Optional.empty();
        }
    }

    /** Whether the backend made the profile home itself, within its deadline (else the script does). */
    boolean makeHome(String home) {
        return hostStep(HOOK_BOUND, d -> backend.makeHome(home, d));
    }

    /** Whether the backend removed the private dir itself, within the kill bound (else {@code rm -rf} does). */
    boolean removePrivateDir(String dir) {
        return hostStep(killBound, d -> backend.removePrivateDir(dir, d));
    }

    private boolean hostStep(Duration bound, Body<Boolean> step) {
        try {
            return bounded(bound, step);
        } catch (IOException | RuntimeException e) {
            Thread.interrupted();
            return false;
        }
    }

    RemoteProcess launch(Launch launch) throws IOException {
        return bounded(HOOK_BOUND, d -> backend.launch(launch, d));
    }

    void stage(String path, Payload data) throws IOException {
        bounded(HOOK_BOUND, d -> {
            stager.stage(path, data, d);
            return null;
        });
    }

    void remove(String path) throws IOException {
        bounded(killBound, d -> {
            stager.remove(path, d);
            return null;
        });
    }

    void kill(RemoteProcess p, OptionalLong group, boolean force) throws IOException {
        bounded(killBound, d -> {
            killer.kill(p, group, force, d);
            return null;
        });
    }

    /**
     * Whether {@link #kill} can reach a process whose group is unknown: only a native killer can,
     * and only one that says so ({@link Killer#killsWithoutGroup}); the core's scripts need the group.
     */
    boolean killsWithoutGroup() {
        return killsWithoutGroup;
    }

    /** What {@link Shell#leadersByNonceScript} printed: the group leaders whose command line holds {@code nonce}. */
    String leadersByNonce(String nonce) throws IOException {
        RawResult r = bounded(killBound, d -> raw.run(Shell.leadersByNonceScript(nonce), null));
        return new String(r.stdout(), StandardCharsets.UTF_8);
    }

    GroupState groupState(long pgid) throws IOException {
        return bounded(killBound, d -> killer.groupState(pgid, d));
    }

    /** The core's own staging and kills, as scripts. */
    ScriptHooks scripts() {
        return scripts;
    }
}
