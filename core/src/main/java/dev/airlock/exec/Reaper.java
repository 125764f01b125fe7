package dev.airlock.exec;

import dev.airlock.spi.GroupState;
import dev.airlock.spi.RemoteProcess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;

/**
 * Kills an exec's process tree by its process group, and only after checking that the group is
 * still the one that was launched: its leader's start time is compared with the one recorded at
 * launch, so a group id the system recycled (hours later, on an ssh host) is never signalled.
 * SIGKILL follows SIGTERM only when the group still has members after the grace period.
 */
final class Reaper {
    private static final Logger LOG = LoggerFactory.getLogger(Reaper.class);

    /** Who was launched: the process group and its leader's start time (when known). */
    record Identity(long pgid, OptionalLong start) {
    }

    private final CoreEnvironment env;
    private final Duration grace;

    Reaper(CoreEnvironment env, Duration grace) {
        this.env = env;
        this.grace = grace;
    }

    /** SIGTERM, then after the grace (or the shell's end) SIGKILL for whatever of the group is left. */
    void terminate(RemoteProcess p, Identity id, BooleanSupplier exited) throws InterruptedException {
        long until = System.nanoTime() + grace.toNanos();
        // A group not there yet while the shell runs: setsid had not made it when launch returned.
        while (!signal(p, id, false)) {
            if (exited.getAsBoolean() || System.nanoTime() >= until) {
                return;
            }
            Thread.sleep(10);
        }
        while (!exited.getAsBoolean() && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        // Grandchildren that ignored SIGTERM are in the group too; a group that is gone gets nothing.
        // (SIGKILL follows at once once the shell ended: waiting out the grace for the rest costs
        // remote round trips the caller's stop bound cannot afford.)
        signal(p, id, true);
    }

    /**
     * Signals the group after re-reading it; returns false when it was not signalled (gone, or no
     * longer the launched one). Without a group id the backend's own kill is the only means.
     */
    boolean signal(RemoteProcess p, Identity id, boolean force) {
        try {
            if (id == null) {
                env.hooks().kill(p, OptionalLong.empty(), force);
                return true;
            }
            GroupState now = env.hooks().groupState(id.pgid());
            if (!now.alive()) {
                return false;
            }
            if (id.start().isPresent() && now.leaderStart().isPresent()
                    && id.start().getAsLong() != now.leaderStart().getAsLong()) {
                LOG.warn("process group {} on {} is no longer the command's (its leader started at {}, not {}); not signalled",
                        id.pgid(), env.name(), now.leaderStart().getAsLong(), id.start().getAsLong());
                return false;
            }
            env.hooks().kill(p, OptionalLong.of(id.pgid()), force);
            return true;
        } catch (IOException | RuntimeException e) {
            LOG.warn("killing a command on {} failed: {}", env.name(), e.getMessage());
            return false;
        }
    }
}
