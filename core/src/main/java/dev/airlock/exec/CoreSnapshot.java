package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.ConfigurationException;
import dev.airlock.spi.Deadline;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;

/**
 * {@code Environment.snapshot()}: refused in one line where the backend takes none, else the
 * backend's hook, bounded by {@code airlock.snapshot.timeout} like every other hook. It runs on the
 * caller's thread, so the bound's own interrupt is cleared before it returns, and a caller's own
 * interrupt (a cancel) is kept and told apart from the timeout.
 */
final class CoreSnapshot {
    private CoreSnapshot() {
    }

    static String take(CoreEnvironment env) {
        env.ensureOpen();
        String name = env.name();
        if (!env.backend().capabilities().snapshots()) {
            throw new ConfigurationException("the " + name + " backend takes no snapshots (Capabilities.snapshots()"
                    + " is false: it has no sandbox image to save); use a backend that does (docker, modal, daytona, vercel), or keep the"
                    + " files with files().copyOut");
        }
        Duration bound = env.config().snapshotTimeout();
        Deadline over = Deadline.in(bound);
        try {
            return env.hooks().snapshot(env.target().privateDir(), bound);
        } catch (InterruptedIOException e) {
            if (!over.passed()) {
                Thread.currentThread().interrupt(); // the caller's own interrupt, not the bound's: it keeps it
                throw new BackendException("the snapshot of the " + name + " environment " + env.id() + " was interrupted", e);
            }
            throw new BackendException("the " + name + " environment " + env.id() + " took no snapshot within "
                    + (bound.toMillis() % 1000 == 0 ? bound.toSeconds() + " s" : bound.toMillis() + " ms")
                    + "; raise " + CoreSettings.SNAPSHOT_TIMEOUT_KEY + " if the sandbox is that large", e);
        } catch (IOException e) {
            throw new BackendException("the " + name + " environment " + env.id() + " could not take a snapshot: " + e.getMessage(), e);
        } finally {
            if (over.passed()) {
                Thread.interrupted(); // the bound's interrupt was meant for the hook
            }
        }
    }
}
