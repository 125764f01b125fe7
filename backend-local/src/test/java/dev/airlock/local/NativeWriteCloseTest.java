package dev.airlock.local;

import dev.airlock.EnvironmentClosedException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.Payload;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A native write (the JVM writes the file, no command runs) ends when its environment closes, as a
 * shell write's command is killed: the caller's thread returns, no temp sibling remains, and the
 * target keeps its old bytes, even when the source blocks in a read nothing can wake (a JVM's stdin).
 */
@Timeout(120) // a guard against the hang this class is about, not a timing assertion
class NativeWriteCloseTest {

    private static Settings settings(Path airlockHome) {
        // Native files exist only without a sandbox: under bubblewrap writes go through commands.
        return Settings.of("airlock.container", "no", "airlock.home-mode", "profile", "airlock.home", airlockHome.toString(),
                "airlock.local.isolation", "none");
    }

    @Test
    void closeDuringABlockedWriteEndsItAndLeavesTheOldFileAndNoTempFile(@TempDir Path airlockHome, @TempDir Path dir)
            throws Exception {
        Path target = dir.resolve("out.bin");
        Files.writeString(target, "old\n");
        UnwakeableSource source = new UnwakeableSource(100_000);
        Environment env = Environments.open(settings(airlockHome));
        CompletableFuture<Void> write = CompletableFuture.runAsync(
                () -> env.files().write(target.toString(), Payload.ofStream(source)));
        awaitTempFile(dir);

        env.close();

        // Checked when close returns, not later: the CLI exits right after it.
        assertEquals(List.of(target), list(dir), "close returned with a temp file left");
        assertEquals("old\n", Files.readString(target), "the target keeps its old bytes");
        ExecutionException e = assertThrows(ExecutionException.class, write::get);
        assertInstanceOf(EnvironmentClosedException.class, e.getCause(), String.valueOf(e.getCause()));
        source.release();
    }

    @Test
    void aStreamedWriteIsByteExactWhateverSizesTheSourceReadsIn(@TempDir Path airlockHome, @TempDir Path dir) throws Exception {
        byte[] data = new byte[3 * 256 * 1024 + 12_345]; // more than the hand-over buffers, and not a multiple
        new Random(7).nextBytes(data);
        Path target = dir.resolve("exact.bin");
        try (Environment env = Environments.open(settings(airlockHome))) {
            env.files().write(target.toString(), Payload.ofStream(new OddReads(data)));
            env.files().write(dir.resolve("known.bin").toString(), Payload.ofStream(new OddReads(data), data.length));
        }
        assertArrayEquals(data, Files.readAllBytes(target));
        assertArrayEquals(data, Files.readAllBytes(dir.resolve("known.bin")));
        assertEquals(List.of(dir.resolve("exact.bin"), dir.resolve("known.bin")), list(dir), "no temp file left");
    }

    @Test
    void aWriteStartedAfterCloseIsRefusedAndWritesNothing(@TempDir Path airlockHome, @TempDir Path dir) {
        Environment env = Environments.open(settings(airlockHome));
        env.close();
        assertThrows(EnvironmentClosedException.class,
                () -> env.files().write(dir.resolve("late.txt").toString(), "x".getBytes(StandardCharsets.UTF_8)));
        assertEquals(List.of(), list(dir));
    }

    private static List<Path> list(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void awaitTempFile(Path dir) throws InterruptedException {
        while (list(dir).stream().noneMatch(f -> f.getFileName().toString().startsWith(".airlock-write-"))) {
            Thread.sleep(20);
        }
    }

    /** Gives {@code first} bytes, then blocks ignoring interrupts and close, as a read of a silent stdin does. */
    private static final class UnwakeableSource extends InputStream {
        private final CountDownLatch released = new CountDownLatch(1);
        private int left;

        UnwakeableSource(int first) {
            this.left = first;
        }

        void release() {
            released.countDown();
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (left > 0) {
                int n = Math.min(len, left);
                left -= n;
                return n;
            }
            boolean interrupted = false;
            while (released.getCount() > 0) {
                try {
                    released.await();
                } catch (InterruptedException e) {
                    interrupted = true; // ignored, as a native read ignores it
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return -1;
        }

        @Override
        public void close() {
            // a close does not wake the read either
        }
    }

    /** Reads in sizes 1, 2, ..., 9973 and again, and sometimes 0 bytes. */
    private static final class OddReads extends InputStream {
        private final byte[] data;
        private int pos;
        private int step;

        OddReads(byte[] data) {
            this.data = data;
        }

        @Override
        public int read() {
            return pos < data.length ? data[pos++] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (pos >= data.length) {
                return -1;
            }
            step = (step + 7919) % 9973;
            int n = Math.min(Math.min(len, step), data.length - pos);
            System.arraycopy(data, pos, b, off, n);
            pos += n;
            return n;
        }
    }
}
