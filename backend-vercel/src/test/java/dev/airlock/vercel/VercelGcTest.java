package dev.airlock.vercel;

import dev.airlock.Environment;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * gc removes the sandboxes this owner left (by core's labels), never a younger one, never another
 * owner's in the same project or one without Airlock's labels, and an {@code up} one only when asked.
 */
class VercelGcTest {
    private static final VercelEmulatorFixture EMULATOR = new VercelEmulatorFixture(FaultPlan.none());

    @AfterAll
    static void stop() {
        EMULATOR.close();
    }

    @Test
    void gcRemovesOnlyThisOwnersOrphansAndKeptOnesOnlyWhenAsked() {
        VercelProvider p = new VercelProvider();
        String kept = p.up(EMULATOR.settings());
        Environment orphan = p.open(OpenContext.of(EMULATOR.settings())); // left open: as if its JVM died
        String foreign;
        String unlabelled;
        try (VercelApi api = new VercelApi(VercelSettings.from(EMULATOR.settings(), Map.of()), EMULATOR.settings())) {
            Map<String, String> theirs = new HashMap<>(VercelEnvironment.tags(false));
            theirs.put(VercelEnvironment.LABEL_PREFIX + "owner", "mallory@elsewhere");
            theirs.put(VercelEnvironment.LABEL_PREFIX + "created", "2020-01-01T00:00:00Z");
            foreign = api.create(theirs).sandboxName();
            unlabelled = api.create(Map.of(VercelEnvironment.TAG, "1")).sandboxName();
        }
        assertEquals(List.of(), p.gc(EMULATOR.settings(), Duration.ofHours(1), true), "nothing is an hour old");
        List<String> removed = p.gc(EMULATOR.settings(), Duration.ZERO, false);
        assertEquals(1, removed.size(), "only the orphan: " + removed);
        assertTrue(!removed.contains(kept) && !removed.contains(foreign) && !removed.contains(unlabelled), removed.toString());
        assertEquals(List.of(kept), p.gc(EMULATOR.settings(), Duration.ZERO, true));
        orphan.close(); // its sandbox is gone already: closing finds nothing to stop
        p.down(EMULATOR.settings(), foreign);
        p.down(EMULATOR.settings(), unlabelled);
    }
}
