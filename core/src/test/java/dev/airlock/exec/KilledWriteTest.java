package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import dev.airlock.WriteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A write's script removes its temp file in its EXIT trap, but a shell that is SIGKILLed never
 * runs it: the kill's SIGKILL after the grace (CI saw it when the SIGTERM reached the shell just
 * before it started {@code cat}, which then waited for an input the core holds open until the
 * kill is done), or the OOM killer. The write still fails with the old bytes in place, and the
 * core removes the temp file before the caller hears of the failure.
 */
class KilledWriteTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends hosts = new HostBackends();

    private static final byte[] OLD = "the old bytes\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);

    /** The temp files beside the target. */
    private List<String> temps() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".airlock-write-")).toList();
        }
    }

    /** Waits (bounded) until the write's script has made its temp file (beside {@code others} already there). */
    private void awaitTempFile(int others) throws IOException, InterruptedException {
        long until = System.nanoTime() + HostBackend.HANG.toNanos();
        while (temps().size() <= others) {
            if (System.nanoTime() > until) {
                fail("the write's script never made its temp file");
            }
            Thread.sleep(10);
        }
    }

    /**
     * 2 KiB of the 4 KiB promised, then a read that waits for {@code fail} and throws: the
     * script has its temp file and waits in {@code cat} for the rest.
     */
    private static InputStream halfThenFails(CountDownLatch fail) {
        return new InputStream() {
            private boolean sent;

            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (!sent) {
                    sent = true;
                    int n = Math.min(len, 2048);
                    java.util.Arrays.fill(b, off, off + n, (byte) 'x');
                    return n;
                }
                try {
                    fail.await(HostBackend.HANG.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new IOException("the source failed half-way");
            }
        };
    }

    @Test
    void aWriteWhoseContentFailsAndWhoseSigtermNeverLandsLeavesNoTempFile() throws Exception {
        HostBackend b = hosts.add(new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, true, List.of()));
        b.term = HostBackend.Fault.INTERRUPTED_RETURNS; // the SIGTERM is not taken: the SIGKILL after the grace ends the script
        Path target = dir.resolve("f");
        Files.write(target, OLD);
        // Another write's temp file, as one running beside this one has: not this write's to remove.
        Files.write(dir.resolve(".airlock-write-0123456789abcdef-other"), OLD);
        CountDownLatch fail = new CountDownLatch(1);
        CompletableFuture<Void> write = CompletableFuture.runAsync(() ->
                b.env.files().write(target.toString(), Payload.ofStream(halfThenFails(fail), 4096), WriteOptions.defaults()));
        awaitTempFile(1);
        fail.countDown();
        Throwable thrown = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> write.get(HostBackend.HANG.toMillis(), TimeUnit.MILLISECONDS)).getCause();
        assertTrue(thrown instanceof BackendException && thrown.getMessage().contains("the source failed half-way"), thrown.toString());
        assertTrue(b.signals.stream().anyMatch(s -> s.startsWith("KILL ")), "the script ended by the SIGKILL: " + b.signals);
        assertArrayEquals(OLD, Files.readAllBytes(target), "the old bytes, not half of the new");
        assertEquals(List.of(".airlock-write-0123456789abcdef-other"), temps(), "no temp file of this write is left, the other's stays");
    }

    @Test
    void aWriteWhoseShellIsKilledFromOutsideLeavesNoTempFile() throws Exception {
        HostBackend b = hosts.add(new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, true, List.of()));
        Path target = dir.resolve("f");
        Files.write(target, OLD);
        CountDownLatch fail = new CountDownLatch(1);
        try {
            CompletableFuture<Void> write = CompletableFuture.runAsync(() ->
                    b.env.files().write(target.toString(), Payload.ofStream(halfThenFails(fail), 4096), WriteOptions.defaults()));
            awaitTempFile(0);
            // As the OOM killer would: the script's shell, SIGKILLed while cat waits for the rest.
            List<Process> live = b.launched.stream().filter(Process::isAlive).toList();
            assertEquals(1, live.size(), "one script runs: the write's");
            live.get(0).destroyForcibly();
            Throwable thrown = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> write.get(HostBackend.HANG.toMillis(), TimeUnit.MILLISECONDS)).getCause();
            assertTrue(thrown instanceof BackendException && thrown.getMessage().contains("exit 137"), thrown.toString());
            assertArrayEquals(OLD, Files.readAllBytes(target), "the old bytes, not half of the new");
            assertEquals(List.of(), temps(), "no temp file is left");
        } finally {
            fail.countDown(); // the payload's reader still waits in it
        }
    }
}
