package dev.airlock.exec;

import dev.airlock.shell.Shell;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.GroupState;
import dev.airlock.spi.RemoteProcess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

    /**
     * After a lost connection the target is reached over fresh logins, which can fail or hit their
     * deadline while the network recovers: each read-and-signal is tried again, with backoff, until
     * this much time has passed (each try is bounded by the hook deadline or the connect timeout, so
     * the whole kill is too, and ends within {@link TreeKill#await}'s wait).
     */
    static final Duration LOST_REACH = Duration.ofSeconds(15);

    /**
     * How long a SIGKILL that failed (the target not reached, a hook that failed or overran its
     * deadline) is tried again: a single transient failure must not leave a killed tree running.
     */
    static final Duration KILL_REACH = LOST_REACH;

    /** SIGTERM, then after the grace (or the shell's end) SIGKILL for whatever of the group is left. */
    boolean terminate(RemoteProcess p, Identity id, BooleanSupplier exited) {
        return terminate(p, id, exited, Duration.ZERO);
    }

    /**
     * As {@link #terminate(RemoteProcess, Identity, BooleanSupplier)}; a read or signal that fails
     * (the target was not reached, as opposed to a group found gone) is tried again until
     * {@code reach} has passed, and a failed SIGKILL until {@link #KILL_REACH} has too. An interrupt
     * never ends the kill early: the only ones it meets are hook deadlines', and it is bounded by
     * its own. Returns true when the group is gone or took its SIGKILL; false when the SIGKILL
     * never got through (the tree may still run: {@link LiveExecs#linger} keeps it for close).
     */
    boolean terminate(RemoteProcess p, Identity id, BooleanSupplier exited, Duration reach) {
        Deadline graceOver = Deadline.in(grace);
        Deadline reachOver = Deadline.in(reach);
        // A target that was not reached is tried for the grace or the reach, whichever is longer.
        Deadline unreachedOver = new Deadline(Math.max(graceOver.nanoTime(), reachOver.nanoTime()));
        // A group not there yet while the shell runs: setsid had not made it when launch returned.
        boolean failed = false;
        boolean termed = false;
        Backoff backoff = new Backoff();
        while (true) {
            Boolean s = trySignal(p, id, false);
            if (Boolean.TRUE.equals(s)) {
                termed = true;
                break;
            }
            failed |= s == null;
            if (s != null && exited.getAsBoolean()) {
                return true;
            }
            if ((s == null ? unreachedOver : graceOver).passed()) {
                if (!failed) {
                    return true; // the group was never there, or is gone: nothing to signal
                }
                // The target did not take the SIGTERM in time (a slow or failing read or signal):
                // its grace is spent, so SIGKILL now rather than give up with the tree running.
                break;
            }
            // A group not there yet is polled quickly; an unreached target is given time to recover.
            pause(s == null ? backoff.afterFailure() : backoff.afterAnswer());
        }
        if (termed) {
            if (failed) {
                graceOver = Deadline.in(grace); // the SIGTERM came late: its grace starts now
            }
            while (!exited.getAsBoolean() && !graceOver.passed()) {
                pause(10);
            }
        }
        // Grandchildren that ignored SIGTERM are in the group too; a group that is gone gets nothing.
        // (SIGKILL follows at once once the shell ended: waiting out the grace for the rest costs
        // remote round trips the caller's stop bound cannot afford.)
        return forceKill(p, id, reach.compareTo(KILL_REACH) > 0 ? reach : KILL_REACH);
    }

    /**
     * SIGKILL for the group (after the identity check), tried again while it fails until
     * {@code reach} has passed. True when it got through or the group is gone.
     */
    boolean forceKill(RemoteProcess p, Identity id, Duration reach) {
        Deadline over = Deadline.in(reach);
        Backoff backoff = new Backoff();
        while (trySignal(p, id, true) == null) {
            if (over.passed()) {
                LOG.warn("the SIGKILL for a command on {} never got through; its process group may still run", env.name());
                return false;
            }
            pause(backoff.afterFailure());
        }
        return true;
    }

    /**
     * Sleeps between tries. An interrupt does not end the kill (it is bounded by its deadlines; the
     * interrupts it meets are its hooks' deadlines), so it only cuts this pause short.
     */
    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            // cleared: the next try still runs
        }
    }

    /**
     * The process group of an exec whose launcher record never came, found on the target by the
     * exec's nonce (see {@link Shell#leadersByNonceScript}); null when none is found in {@code reach}.
     * The command's shell is the leader whose parent is another match (the backend's wrapper shell,
     * when it ran the command under setsid), or the only match.
     */
    Identity find(String nonce, Duration reach) {
        Deadline over = Deadline.in(reach);
        Backoff backoff = new Backoff();
        while (true) {
            try {
                Identity id = pick(env.hooks().leadersByNonce(nonce));
                if (id != null) {
                    return id;
                }
                LOG.warn("the process group of a command on {} whose start was never confirmed was not found; not killed",
                        env.name());
                return null;
            } catch (IOException | RuntimeException e) {
                LOG.warn("looking up a command's process group on {} failed: {}", env.name(), e.getMessage());
                Thread.interrupted(); // a deadline's interrupt must not end the next try
            }
            if (over.passed()) {
                return null;
            }
            pause(backoff.afterFailure());
        }
    }

    /** From {@code PID PPID START} lines: the one leader as {@link #find} describes, or null. */
    static Identity pick(String out) {
        Map<Long, long[]> leaders = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            String[] f = line.strip().split(" +");
            try {
                long start = f.length > 2 ? Long.parseLong(f[2]) : -1;
                leaders.put(Long.parseLong(f[0]), new long[] {Long.parseLong(f[1]), start});
            } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
                // not a line the script prints
            }
        }
        List<Long> chosen = new ArrayList<>();
        for (Map.Entry<Long, long[]> e : leaders.entrySet()) {
            if (leaders.containsKey(e.getValue()[0])) {
                chosen.add(e.getKey());
            }
        }
        if (chosen.isEmpty() && leaders.size() == 1) {
            chosen.addAll(leaders.keySet());
        }
        if (chosen.size() != 1) {
            return null;
        }
        long start = leaders.get(chosen.get(0))[1];
        return new Identity(chosen.get(0), start < 0 ? OptionalLong.empty() : OptionalLong.of(start));
    }

    /**
     * Signals the group after re-reading it; returns false when it was not signalled (gone, no
     * longer the launched one, or not reached). Without a group id the backend's own kill is the
     * only means.
     */
    boolean signal(RemoteProcess p, Identity id, boolean force) {
        return Boolean.TRUE.equals(trySignal(p, id, force));
    }

    /** As {@link #signal}: true signalled, false not (gone or not the launched one), null when the target was not reached. */
    private Boolean trySignal(RemoteProcess p, Identity id, boolean force) {
        try {
            if (id == null) {
                if (!env.hooks().killsWithoutGroup()) {
                    LOG.warn("the process group of a command on {} is unknown and the backend has no native kill; not killed",
                            env.name());
                    return false; // no try can do better: nothing to try again
                }
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
            return null;
        } finally {
            // A hook that overran its deadline may return, or fail with any exception, with its
            // thread still flagged: the flag must not end the next, bounded, try or pause.
            Thread.interrupted();
        }
    }
}
