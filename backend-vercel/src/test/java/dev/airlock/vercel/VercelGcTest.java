package dev.airlock.vercel;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.ResourceLabels;
import dev.airlock.tck.GoneHolder;
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
 * owner's in the same project or one without Airlock's labels, never one an open environment
 * holds, and an {@code up} one only when asked.
 */
class VercelGcTest {
    private static final VercelEmulatorFixture EMULATOR = new VercelEmulatorFixture(FaultPlan.none());

    @AfterAll
    static void stop() {
        EMULATOR.close();
    }

    /** A ledger of this test's own: the module's other tests record their snapshots in the shared one. */
    @org.junit.jupiter.api.io.TempDir
    java.nio.file.Path airlockHome;

    @Test
    void gcRemovesOnlyThisOwnersOrphansAndKeptOnesOnlyWhenAsked() {
        VercelProvider p = new VercelProvider(dev.airlock.spi.SnapshotLedger.of("vercel", Map.of("AIRLOCK_HOME", airlockHome.toString())));
        String kept = p.up(EMULATOR.settings(), dev.airlock.spi.SandboxLifecycle.DEFAULT_TTL);
        String orphan;
        String foreign;
        String unlabelled;
        try (VercelApi api = new VercelApi(VercelSettings.from(EMULATOR.settings(), Map.of()), EMULATOR.settings())) {
            Map<String, String> left = new HashMap<>(VercelBackend.tags(false)); // as a JVM that died left it
            left.put(VercelBackend.LABEL_PREFIX + ResourceLabels.HOLDER, GoneHolder.label());
            orphan = api.create(left).sandboxName();
            Map<String, String> theirs = new HashMap<>(VercelBackend.tags(false));
            theirs.put(VercelBackend.LABEL_PREFIX + "owner", "mallory@elsewhere");
            theirs.put(VercelBackend.LABEL_PREFIX + "created", "2020-01-01T00:00:00Z");
            foreign = api.create(theirs).sandboxName();
            unlabelled = api.create(Map.of(VercelBackend.TAG, "1")).sandboxName();
        }
        assertEquals(List.of(), p.gc(EMULATOR.settings(), Duration.ofHours(1), true), "nothing is an hour old");
        try (Environment live = p.open(OpenContext.of(EMULATOR.settings()))) {
            List<String> removed = p.gc(EMULATOR.settings(), Duration.ZERO, false);
            assertEquals(List.of(orphan), removed, "only the orphan; never the sandbox of an environment still open here");
            assertEquals(0, live.exec(ExecRequest.of("true")).exitCode(), "gc removed a live environment's sandbox");
        }
        assertEquals(List.of(kept), p.gc(EMULATOR.settings(), Duration.ZERO, true));
        p.down(EMULATOR.settings(), foreign);
        p.down(EMULATOR.settings(), unlabelled);
    }
}
