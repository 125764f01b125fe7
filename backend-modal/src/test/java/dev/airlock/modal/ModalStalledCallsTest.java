package dev.airlock.modal;

import dev.airlock.BackendException;
import dev.airlock.Environment;
import dev.airlock.Ports;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A tunnels call and a snapshot the service sits on for 30 s end at their own bound: the port's
 * deadline, and {@code airlock.snapshot.timeout}.
 */
class ModalStalledCallsTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture(
            "SandboxGetTunnelsV2:delay=30s@always,TaskSnapshotFilesystem:delay=30s@always", Map.of());

    @Test
    void aStalledTunnelsCallEndsAtTheDeadline() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings().with(Ports.KEY, "8080")))) {
            long start = System.nanoTime();
            IOException e = assertThrows(IOException.class,
                    () -> ModalBackend.of(env).portForwarder().orElseThrow().open(8080, Deadline.in(Duration.ofSeconds(3))));
            long took = Duration.ofNanos(System.nanoTime() - start).toMillis();
            assertTrue(took < 8_000, "the tunnels call took " + took + " ms for a 3 s deadline");
            assertTrue(e.getMessage().contains("tunnel of port 8080") && !e.getMessage().contains("\n"), e.getMessage());
        }
    }

    @Test
    void aStalledSnapshotEndsAtTheSnapshotTimeout() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings().with("airlock.snapshot.timeout", "3s")))) {
            long start = System.nanoTime();
            BackendException e = assertThrows(BackendException.class, env::snapshot);
            long took = Duration.ofNanos(System.nanoTime() - start).toMillis();
            assertTrue(took < 8_000, "the snapshot took " + took + " ms for a 3 s bound");
            assertTrue(!e.getMessage().contains("\n"), e.getMessage());
        }
    }
}
