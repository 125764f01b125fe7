package dev.airlock.modal;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Payload;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.SandboxLifecycle;
import dev.airlock.spi.SnapshotLedger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code airlock gc} deletes the snapshots Airlock took on Modal that nothing needs, found through
 * the ledger in a temporary {@code AIRLOCK_HOME}, against the emulator over the real wire.
 */
class ModalSnapshotGcTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    @TempDir
    Path airlockHome;

    private ModalProvider provider() {
        return new ModalProvider(Map.of("AIRLOCK_HOME", airlockHome.toString()));
    }

    private Environment open(Settings s) {
        return provider().open(OpenContext.of(s));
    }

    private List<String> ledgerIds() {
        return provider().ledger().entries().stream().map(SnapshotLedger.Entry::id).toList();
    }

    /** Takes a snapshot of a new environment holding a file, then closes it (its sandbox terminated). */
    private String snapshotOfAClosedEnvironment() {
        try (Environment env = open(EMULATOR.settings())) {
            env.files().write(env.target().passwdHome() + "/kept.txt", Payload.of("in the snapshot".getBytes(StandardCharsets.UTF_8)));
            return env.snapshot();
        }
    }

    private void assertCannotOpenFrom(String id) {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> open(EMULATOR.settings().with(ModalSettings.SNAPSHOT, id)).close());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        assertTrue(e.getMessage().contains(id) && e.getMessage().contains(ModalSettings.SNAPSHOT), e.getMessage());
    }

    private void assertOpensFrom(String id) throws IOException {
        try (Environment from = open(EMULATOR.settings().with(ModalSettings.SNAPSHOT, id));
             InputStream in = from.files().read(from.target().passwdHome() + "/kept.txt")) {
            assertArrayEquals("in the snapshot".getBytes(StandardCharsets.UTF_8), in.readAllBytes());
        }
    }

    @Test
    void aSnapshotOfAClosedEnvironmentIsDeletedAndForgotten() {
        String id = snapshotOfAClosedEnvironment();
        assertEquals(List.of(id), ledgerIds(), "the snapshot is recorded");
        // One Modal no longer has (deleted by hand): forgotten, not reported as deleted.
        String scope = ModalSnapshotGc.scope(ModalSettings.from(EMULATOR.settings(), System.getenv()));
        provider().ledger().record("im-DeletedByHand00000000000", "sb-gone@" + scope, Instant.now().minusSeconds(60));

        List<String> removed = provider().gc(EMULATOR.settings(), Duration.ZERO, false);

        assertTrue(removed.contains(id), "gc reports the snapshot it deleted: " + removed);
        assertFalse(removed.contains("im-DeletedByHand00000000000"), "nothing was deleted for it: " + removed);
        assertCannotOpenFrom(id);
        assertEquals(List.of(), ledgerIds(), "the ledger forgets both");
    }

    @Test
    void aSnapshotNewerThanOlderThanIsKept() throws IOException {
        String id = snapshotOfAClosedEnvironment();
        assertFalse(provider().gc(EMULATOR.settings(), Duration.ofHours(1), false).contains(id));
        assertEquals(List.of(id), ledgerIds());
        assertOpensFrom(id);
    }

    @Test
    void aSnapshotWhoseSourceStillRunsIsKeptUntilItEnds() throws IOException {
        String id;
        try (Environment env = open(EMULATOR.settings())) {
            env.files().write(env.target().passwdHome() + "/kept.txt", Payload.of("in the snapshot".getBytes(StandardCharsets.UTF_8)));
            id = env.snapshot();
            assertFalse(provider().gc(EMULATOR.settings(), Duration.ZERO, false).contains(id), "its source runs");
            assertEquals(List.of(id), ledgerIds());
            assertOpensFrom(id);
        }
        assertTrue(provider().gc(EMULATOR.settings(), Duration.ZERO, false).contains(id), "its source has ended");
        assertCannotOpenFrom(id);
    }

    @Test
    void aSnapshotARunningSandboxWasMadeFromIsKeptUntilItEnds() throws IOException {
        String id = snapshotOfAClosedEnvironment();
        try (Environment from = open(EMULATOR.settings().with(ModalSettings.SNAPSHOT, id))) {
            assertFalse(provider().gc(EMULATOR.settings(), Duration.ZERO, false).contains(id), "a running sandbox was made from it");
            assertEquals(List.of(id), ledgerIds());
            try (InputStream in = from.files().read(from.target().passwdHome() + "/kept.txt")) {
                assertArrayEquals("in the snapshot".getBytes(StandardCharsets.UTF_8), in.readAllBytes());
            }
        }
        assertTrue(provider().gc(EMULATOR.settings(), Duration.ZERO, false).contains(id), "nothing runs from it any more");
        assertCannotOpenFrom(id);
    }

    /** As on Daytona: a source that this very run terminated leaves its snapshot to the next run. */
    @Test
    void aSnapshotWhoseSourceThisRunTerminatedIsLeftToTheNextRun() {
        String up = provider().up(EMULATOR.settings(), SandboxLifecycle.DEFAULT_TTL);
        String id;
        try (Environment attached = open(EMULATOR.settings().with(ModalSettings.SANDBOX_ID, up))) {
            id = attached.snapshot();
        }
        List<String> first = provider().gc(EMULATOR.settings(), Duration.ZERO, true);
        assertTrue(first.contains(up), "the kept sandbox is collected: " + first);
        assertFalse(first.contains(id), "its snapshot waits for the next run: " + first);
        assertEquals(List.of(id), ledgerIds());
        assertEquals(List.of(id), provider().gc(EMULATOR.settings(), Duration.ZERO, true));
        assertCannotOpenFrom(id);
    }

    /** Another Modal's (or environment's) snapshot is neither judged, deleted nor forgotten here. */
    @Test
    void aSnapshotOfAnotherModalIsLeftInTheLedger() {
        provider().ledger().record("im-ElsewhereSnapshot000000000", "sb-gone@https://api.example.test:443#main",
                Instant.now().minusSeconds(3600));
        assertFalse(provider().gc(EMULATOR.settings(), Duration.ZERO, false).contains("im-ElsewhereSnapshot000000000"));
        assertEquals(List.of("im-ElsewhereSnapshot000000000"), ledgerIds());
    }

    /** A ledger that cannot be written costs only the collection: the snapshot is taken and opens. */
    @Test
    void aSnapshotStandsWhenTheLedgerCannotBeWritten() throws IOException {
        Files.writeString(airlockHome.resolve("snapshots"), "a file where the ledger's directory should be");
        String id = snapshotOfAClosedEnvironment();
        assertTrue(id.startsWith("im-"), id);
        assertOpensFrom(id);
        assertEquals(List.of(), ledgerIds());
    }
}
