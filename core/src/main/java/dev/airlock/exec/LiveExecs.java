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
 * dispatched, and the registration is re-checked against the stop, so either close sees the exec
 * and cancels it, or the exec sees the stop and is refused. Also the finished execs whose
 * background processes still held output (killed, checked, at close).
 */
final class LiveExecs {
    /** Execs one environment runs at once; more is refused with a clear error, never queued unboundedly. */
    static final int MAX_LIVE = 64;

    /** Why a registration was refused. */
    enum Refusal { NONE, STOPPED, FULL }

    private final Set<ExecRun> live = ConcurrentHashMap.newKeySet();
    private final Map<RemoteProcess, Optional<Reaper.Identity>> lingering = new ConcurrentHashMap<>();
    private volatile boolean stopped;

    Refusal register(ExecRun run) {
        live.add(run);
        // Checked after registering: the stop is set before the snapshot of live execs is taken,
        // so either the snapshot holds this exec or this sees the stop.
        if (stopped) {
            live.remove(run);
            return Refusal.STOPPED;
        }
        if (live.size() > MAX_LIVE) {
            live.remove(run);
            return Refusal.FULL;
        }
        return Refusal.NONE;
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
    List<ExecRun> stop() {
        stopped = true;
        return List.copyOf(live);
    }

    void linger(RemoteProcess p, Reaper.Identity identity) {
        lingering.put(p, Optional.ofNullable(identity));
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
