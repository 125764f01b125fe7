package dev.airlock.exec;

import dev.airlock.spi.RemoteProcess;
import dev.airlock.ExecRequest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Registration against the stop, the bound, and the lingering set, without a backend. */
class LiveExecsTest {

    private static ExecRun run() {
        return new ExecRun(null, 1, ExecRequest.of("true"), false);
    }

    @Test
    void afterTheStopNothingRegisters() {
        LiveExecs live = new LiveExecs();
        ExecRun early = run();
        assertEquals(LiveExecs.Refusal.NONE, live.register(early));
        assertEquals(List.of(early), live.stop(), "the stop sees what registered before it");
        assertEquals(LiveExecs.Refusal.STOPPED, live.register(run()));
        assertEquals(1, live.size(), "a refused exec is not left registered");
        assertTrue(live.isStopped());
    }

    @Test
    void theBoundCountsOnlyExecsThatHaveNotEnded() {
        LiveExecs live = new LiveExecs();
        List<ExecRun> runs = new ArrayList<>();
        for (int i = 0; i < LiveExecs.MAX_LIVE; i++) {
            ExecRun r = run();
            runs.add(r);
            assertEquals(LiveExecs.Refusal.NONE, live.register(r));
        }
        assertEquals(LiveExecs.Refusal.FULL, live.register(run()));
        assertEquals(LiveExecs.MAX_LIVE, live.size());
        live.remove(runs.get(0));
        assertEquals(LiveExecs.MAX_LIVE - 1, live.size());
        assertEquals(LiveExecs.Refusal.NONE, live.register(run()), "a finished exec still counted against the bound");
    }

    @Test
    void eachLingeringProcessIsKilledOnce() {
        LiveExecs live = new LiveExecs();
        RemoteProcess p = new RemoteProcess() {
            @Override
            public java.io.OutputStream stdin() {
                return java.io.OutputStream.nullOutputStream();
            }

            @Override
            public java.io.InputStream stdout() {
                return java.io.InputStream.nullInputStream();
            }

            @Override
            public java.io.InputStream stderr() {
                return java.io.InputStream.nullInputStream();
            }

            @Override
            public int waitFor() {
                return 0;
            }

            @Override
            public java.util.OptionalLong processGroup() {
                return java.util.OptionalLong.of(7);
            }
        };
        Reaper.Identity id = new Reaper.Identity(7, java.util.OptionalLong.of(99));
        live.linger(p, id);
        List<Reaper.Identity> killed = new ArrayList<>();
        live.drainLingering((proc, i) -> killed.add(i));
        live.drainLingering((proc, i) -> killed.add(i));
        assertEquals(List.of(id), killed);
    }
}
