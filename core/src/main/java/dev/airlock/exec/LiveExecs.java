package dev.airlock.exec;

import dev.airlock.spi.RemoteProcess;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * The execs an environment runs, and the stop that ends them: an exec is registered before it is
 * dispatched, and registration and the stop hold one lock, so either close sees the exec and
 * cancels it, or the exec sees the stop and is refused. An exec leaves the live set with its
 * result, and the flows set when its flow ended (close waits for those that were dispatched).
 * Also the trees whose kill has not got through yet, killed again (identity checked) at close.
 */
final class LiveExecs {
    /** Execs one environment runs at once; more is refused with a clear error, never queued unboundedly. */
    static final int MAX_LIVE = 64;

    /** Why a registration was refused. */
    enum Refusal { NONE, STOPPED, FULL }

    private final Set<ExecRun> live = ConcurrentHashMap.newKeySet();
    /** Execs whose flow has not ended: a stop's result may leave the live set before its flow does. */
    private final Set<ExecRun> flows = ConcurrentHashMap.newKeySet();
    private final Map<RemoteProcess, Optional<Reaper.Identity>> lingering = new ConcurrentHashMap<>();
    private volatile boolean stopped;

    /**
     * Registers {@code run} unless the stop came or the bound is full; checked and added as one
     * step, so two execs racing for the last place never both lose it.
     */
    synchronized Refusal register(ExecRun run) {
        if (stopped) {
            return Refusal.STOPPED;
        }
        if (live.size() >= MAX_LIVE) {
            return Refusal.FULL;
        }
        live.add(run);
        flows.add(run);
        return Refusal.NONE;
    }

    /** {@code run}'s flow ended (it may have left the live set before, with a stop's result). */
    void flowEnded(ExecRun run) {
        flows.remove(run);
    }

    /** The execs whose flow has not ended yet, for close to wait on (a launch may still be in flight). */
    List<ExecRun> unsettled() {
        return List.copyOf(flows);
    }

    void remove(ExecRun run) {
        live.remove(run);
    }

    int size() {
        return live.size();
    }

    boolean isStopped() {
        return stopped;
    }

    /** Marks the stop and returns the execs it must end; none registers after this. */
    synchronized List<ExecRun> stop() {
        stopped = true;
        return List.copyOf(live);
    }

    /** Keeps {@code p} (which may still run processes) for close to kill, checked against {@code identity}. */
    void linger(RemoteProcess p, Reaper.Identity identity) {
        lingering.put(p, Optional.ofNullable(identity));
    }

    /** {@code p}'s tree was killed, or is gone: close need not. */
    void unlinger(RemoteProcess p) {
        lingering.remove(p);
    }

    /** How many processes close would kill now. */
    int lingering() {
        return lingering.size();
    }

    /** Hands each lingering process to {@code kill} once, and forgets them. */
    void drainLingering(BiConsumer<RemoteProcess, Reaper.Identity> kill) {
        for (RemoteProcess p : List.copyOf(lingering.keySet())) {
            Optional<Reaper.Identity> id = lingering.remove(p);
            if (id != null) {
                kill.accept(p, id.orElse(null));
            }
        }
    }
}
