package dev.airlock.spi;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ledger of snapshots taken: kept per backend under $AIRLOCK_HOME, 0600, nothing lost to concurrent writers. */
class SnapshotLedgerTest {
    @TempDir
    Path home;

    private SnapshotLedger ledger() {
        return SnapshotLedger.of("acme", Map.of("AIRLOCK_HOME", home.toString()));
    }

    @Test
    void recordsAreReadBackInOrderAndForgettingKeepsTheRest() throws Exception {
        SnapshotLedger l = ledger();
        assertEquals(List.of(), l.entries(), "no file yet");
        l.record("im-1", "sb-a", Instant.ofEpochSecond(100));
        l.record("im-2", "sb-b", Instant.ofEpochSecond(200));
        l.record("im-3", "sb-a", Instant.ofEpochSecond(300));
        assertEquals(List.of(new SnapshotLedger.Entry("im-1", "sb-a", Instant.ofEpochSecond(100)),
                new SnapshotLedger.Entry("im-2", "sb-b", Instant.ofEpochSecond(200)),
                new SnapshotLedger.Entry("im-3", "sb-a", Instant.ofEpochSecond(300))), l.entries());
        assertEquals(home.resolve("snapshots/acme.ledger"), l.file());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(l.file())));
        l.forget(Set.of("im-2"));
        assertEquals(List.of("im-1", "im-3"), l.entries().stream().map(SnapshotLedger.Entry::id).toList());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(l.file())));
        assertEquals(List.of("im-1", "im-3"), ledger().entries().stream().map(SnapshotLedger.Entry::id).toList(), "another instance reads the same");
    }

    @Test
    void writersAtOnceLoseNoLineWhileOthersAreForgotten() throws Exception {
        SnapshotLedger l = ledger();
        l.record("old", "sb", Instant.ofEpochSecond(1));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                all.add(pool.submit(() -> {
                    for (int i = 0; i < 50; i++) {
                        ledger().record("im-" + thread + "-" + i, "sb-" + thread, Instant.ofEpochSecond(1000 + i));
                        if (thread == 0 && i == 25) {
                            ledger().forget(Set.of("old"));
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : all) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        Set<String> ids = new HashSet<>();
        l.entries().forEach(e -> ids.add(e.id()));
        assertEquals(200, ids.size(), "every record kept, the forgotten one gone: " + ids.size());
        assertTrue(!ids.contains("old"));
    }

    @Test
    void aLedgerOthersMayWriteIsNotBelievedAndABadIdIsRefused() throws Exception {
        SnapshotLedger l = ledger();
        l.record("im-1", "sb", Instant.ofEpochSecond(1));
        Files.setPosixFilePermissions(l.file(), PosixFilePermissions.fromString("rw-rw-rw-"));
        assertEquals(List.of(), l.entries(), "a file anyone may write names nothing to delete");
        assertThrows(IllegalArgumentException.class, () -> l.record("two words", "sb", Instant.EPOCH));
        assertThrows(IllegalArgumentException.class, () -> l.record("im\n2", "sb", Instant.EPOCH));
    }

    @Test
    void aTornOrForeignLineIsSkipped() throws Exception {
        SnapshotLedger l = ledger();
        l.record("im-1", "sb", Instant.ofEpochSecond(1));
        Files.writeString(l.file(), "garbage\n12\tim-x\n", java.nio.file.StandardOpenOption.APPEND);
        l.record("im-2", "sb", Instant.ofEpochSecond(2));
        assertEquals(List.of("im-1", "im-2"), l.entries().stream().map(SnapshotLedger.Entry::id).toList());
    }

    @Test
    void aLastLineACrashCutShortIsNotReadAndTheNextRecordStartsAfterIt() throws Exception {
        SnapshotLedger l = ledger();
        l.record("im-1", "sb-a", Instant.ofEpochSecond(1));
        Files.writeString(l.file(), "2\tim-2\tsb-b-cut", java.nio.file.StandardOpenOption.APPEND); // no line end
        assertEquals(List.of("im-1"), l.entries().stream().map(SnapshotLedger.Entry::id).toList(),
                "a torn line's source may be cut short: it names nothing");
        l.record("im-3", "sb-c", Instant.ofEpochSecond(3));
        assertEquals(List.of(new SnapshotLedger.Entry("im-1", "sb-a", Instant.ofEpochSecond(1)),
                new SnapshotLedger.Entry("im-3", "sb-c", Instant.ofEpochSecond(3))), l.entries());
    }
}
