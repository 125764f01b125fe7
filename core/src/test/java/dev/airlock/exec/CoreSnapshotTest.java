package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.Capabilities;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Deadline;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The core's side of {@code Environment.snapshot()}: the backend's call is bounded like every other hook. */
class CoreSnapshotTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();


    /** How a snapshot call waits: not at all, or until interrupted (keeping the flag, as a client checking it does, or clearing it, as a sleep does). */
    enum Stall { NONE, KEEPS_FLAG, CLEARS_FLAG }

    /** A host backend that takes snapshots, waiting as {@code stall} says. */
    static final class Snapshotting extends HostBackend {
        private final Stall stall;

        Snapshotting(Settings settings, Stall stall) {
            super(settings, Capabilities.pipe().withSnapshots(true), List.of());
            this.stall = stall;
        }

        @Override
        public String snapshot(String privateDir, Deadline deadline) throws IOException {
            if (stall == Stall.KEEPS_FLAG) {
                long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
                while (!Thread.currentThread().isInterrupted() && System.nanoTime() < until) {
                    java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
                throw new java.io.InterruptedIOException("the commit was interrupted");
            }
            if (stall == Stall.CLEARS_FLAG) {
                try {
                    Thread.sleep(TimeUnit.MINUTES.toMillis(10));
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException("the commit was interrupted");
                }
            }
            return "snap-1 of " + privateDir.substring(privateDir.lastIndexOf('/') + 1) + " within " + deadline.remaining().toMinutes() + " min";
        }
    }

    @Test
    void aSnapshotIsTheBackendsIdWithinTheDefaultBound() {
        Snapshotting b = new Snapshotting(HostBackend.settings(dir), Stall.NONE);
        opened.add(b);
        String id = b.env.snapshot();
        assertTrue(id.startsWith("snap-1 of ") && id.endsWith(" within 29 min"), id);
    }

    /**
     * A backend whose save never answers is interrupted at {@code airlock.snapshot.timeout}: the
     * caller gets one line saying so, and its own thread is not left interrupted.
     */
    @Test
    void aStalledSnapshotEndsAtItsTimeoutWithOneLine() {
        Snapshotting b = new Snapshotting(HostBackend.settings(dir, "airlock.snapshot.timeout", "300ms"), Stall.KEEPS_FLAG);
        opened.add(b);
        long t0 = System.nanoTime();
        BackendException e = assertThrows(BackendException.class, () -> b.env.snapshot());
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < 60_000, "the stalled snapshot held the caller " + ms + " ms");
        assertEquals("the host environment " + b.env.id() + " took no snapshot within 300 ms; raise airlock.snapshot.timeout"
                + " if the sandbox is that large", e.getMessage());
        assertFalse(Thread.currentThread().isInterrupted(), "the bound's interrupt leaked into the caller's thread");
        // The environment still works after it.
        assertEquals(0, b.env.exec(dev.airlock.ExecRequest.of("true")).exitCode());
    }

    /** An interrupt of the caller's own (a cancel) is not the timeout: one line saying so, and the thread keeps it. */
    @Test
    void aCallersInterruptEndsTheSnapshotAndIsKept() throws Exception {
        Snapshotting b = opened.add(new Snapshotting(HostBackend.settings(dir), Stall.CLEARS_FLAG));
        Thread caller = Thread.currentThread();
        Thread interrupter = new Thread(() -> {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                return;
            }
            caller.interrupt();
        });
        interrupter.start();
        try {
            BackendException e = assertThrows(BackendException.class, () -> b.env.snapshot());
            assertEquals("the snapshot of the host environment " + b.env.id() + " was interrupted", e.getMessage());
            assertTrue(Thread.interrupted(), "the caller's interrupt was swallowed");
        } finally {
            interrupter.join();
        }
    }
}
