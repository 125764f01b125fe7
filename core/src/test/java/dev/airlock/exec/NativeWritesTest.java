package dev.airlock.exec;

import dev.airlock.EnvironmentClosedException;
import dev.airlock.Payload;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a backend's native write is handed: bytes and files as they are (readable again), a stream through an abortable source. */
class NativeWritesTest {
    private final NativeWrites writes = new NativeWrites(new Workers("native-writes-test"));

    /** A backend retrying an upload after a lost answer reads a byte or file payload again: it must stay repeatable. */
    @Test
    void bytesAndFilesReachTheBackendUnwrappedAndReadableTwice() throws Exception {
        byte[] data = {1, 0, 2, (byte) 0xff};
        Path file = Files.createTempFile("native-writes", ".bin");
        try {
            Files.write(file, data);
            for (Payload p : new Payload[] {Payload.of(data), Payload.ofFile(file)}) {
                try (NativeWrites.Write w = writes.begin(p, "the test write")) {
                    assertSame(p, w.payload());
                    assertTrue(w.payload().isRepeatable());
                    for (int i = 0; i < 2; i++) {
                        try (InputStream in = w.payload().open()) {
                            assertArrayEquals(data, in.readAllBytes());
                        }
                    }
                    assertFalse(w.aborted());
                }
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** A stream goes through the source that close can abort: the next read fails, and new writes are refused. */
    @Test
    void aStreamIsAbortedByCloseAndLaterWritesAreRefused() throws Exception {
        InputStream endless = new InputStream() {
            @Override
            public int read() {
                return 7;
            }
        };
        NativeWrites.Write w = writes.begin(Payload.ofStream(endless), "the test write");
        InputStream in = w.payload().open();
        assertTrue(in.read(new byte[10]) > 0);
        Thread closer = new Thread(() -> writes.abortAll(java.util.concurrent.TimeUnit.SECONDS.toNanos(5)));
        closer.start();
        assertThrows(IOException.class, () -> {
            byte[] buf = new byte[64 * 1024];
            while (in.read(buf) >= 0) {
                // read until the close makes the next read fail
            }
        });
        assertTrue(w.aborted());
        w.close();
        closer.join(10_000);
        assertFalse(closer.isAlive(), "close waited for a write that had returned");
        assertThrows(EnvironmentClosedException.class,
                () -> writes.begin(Payload.ofStream(new ByteArrayInputStream(new byte[1])), "a later write"));
    }

    /** Far above any wait here: only a hang reaches it. */
    private static final long HANG_MS = 20_000;

    /** A stream of many chunks, read in small pieces, arrives whole and in order; its end is not a close. */
    @Test
    void aStreamOfManyChunksArrivesWholeThroughTheSource() throws Exception {
        byte[] data = pattern(3 * 256 * 1024 + 4099);
        NativeWrites.Write w = writes.begin(Payload.ofStream(new ByteArrayInputStream(data), data.length), "the test write");
        assertEquals(data.length, w.payload().length().orElseThrow(), "the stream's declared length was lost");
        java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
        try (InputStream in = w.payload().open()) {
            assertEquals(0, in.read(new byte[8], 0, 0), "a read of nothing must return 0");
            byte[] buf = new byte[1000];
            int n;
            while ((n = in.read(buf)) >= 0) {
                got.write(buf, 0, n);
            }
        }
        w.close();
        assertArrayEquals(data, got.toByteArray());
        assertFalse(w.aborted(), "a write that ended by itself reads as stopped by close");
    }

    /**
     * The worker reads the next chunk while the writer still takes the previous one: into the other
     * buffer, so the chunk being taken is never overwritten.
     */
    @Test
    void theNextChunkIsReadWhileThePreviousIsTakenWithoutOverwritingIt() throws Exception {
        CountDownLatch secondReadDone = new CountDownLatch(1);
        AtomicInteger reads = new AtomicInteger();
        InputStream source = new InputStream() {
            @Override
            public int read() {
                throw new UnsupportedOperationException();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                int k = reads.getAndIncrement();
                if (k >= 2) {
                    return -1;
                }
                java.util.Arrays.fill(b, off, off + 100, (byte) ('a' + k));
                if (k == 1) {
                    secondReadDone.countDown();
                }
                return 100;
            }
        };
        NativeWrites.Write w = writes.begin(Payload.ofStream(source), "the test write");
        try (InputStream in = w.payload().open()) {
            byte[] first = in.readNBytes(10);
            assertTrue(secondReadDone.await(HANG_MS, TimeUnit.MILLISECONDS), "the worker never read ahead");
            byte[] rest = in.readNBytes(90);
            byte[] second = in.readAllBytes();
            assertEquals("a".repeat(10), new String(first, java.nio.charset.StandardCharsets.US_ASCII));
            assertEquals("a".repeat(90), new String(rest, java.nio.charset.StandardCharsets.US_ASCII),
                    "the chunk being taken was overwritten by the next one");
            assertEquals("b".repeat(100), new String(second, java.nio.charset.StandardCharsets.US_ASCII));
        } finally {
            w.close();
        }
    }

    /** A source that fails: the writer's next read fails with its message, unchecked failures included. */
    @Test
    void aFailingSourceFailsTheWritersRead() {
        NativeWrites.Write io = writes.begin(Payload.ofStream(failing(new IOException("the disk is gone"))), "the test write");
        IOException e = assertThrows(IOException.class, () -> io.payload().open().readAllBytes());
        assertEquals("the disk is gone", e.getMessage());
        io.close();
        NativeWrites.Write rt = writes.begin(Payload.ofStream(failing(new IllegalStateException("broken source"))), "the test write");
        IOException r = assertThrows(IOException.class, () -> rt.payload().open().readAllBytes());
        assertEquals("reading the content to write failed: java.lang.IllegalStateException: broken source", r.getMessage());
        assertFalse(rt.aborted());
        rt.close();
    }

    /** An interrupt of a writer waiting for bytes ends its read (the interrupt kept); it is no close. */
    @Test
    void anInterruptedWriterStopsWaitingAndItIsNoClose() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        InputStream blocking = new InputStream() {
            @Override
            public int read() throws IOException {
                try {
                    never.await();
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException();
                }
                return -1;
            }
        };
        NativeWrites.Write w = writes.begin(Payload.ofStream(blocking), "the test write");
        Throwable[] thrown = new Throwable[1];
        boolean[] flagged = new boolean[1];
        Thread writer = new Thread(() -> {
            try {
                w.payload().open().read(new byte[10]);
            } catch (Throwable t) {
                thrown[0] = t;
                flagged[0] = Thread.currentThread().isInterrupted();
            }
        });
        writer.start();
        writer.interrupt();
        writer.join(HANG_MS);
        never.countDown();
        assertFalse(writer.isAlive(), "an interrupted writer still waits for bytes");
        assertTrue(thrown[0] instanceof java.io.InterruptedIOException, String.valueOf(thrown[0]));
        assertTrue(flagged[0], "the interrupt was swallowed");
        assertFalse(w.aborted(), "an interrupt reads as the environment's close");
        w.close();
    }

    /** The backend closing the stream early (a write it gave up) stops the worker, which closes the caller's source. */
    @Test
    void aStreamClosedEarlyStopsReadingTheCallersSource() throws Exception {
        AtomicBoolean sourceClosed = new AtomicBoolean();
        InputStream endless = new InputStream() {
            @Override
            public int read() {
                return 7;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                java.util.Arrays.fill(b, off, off + len, (byte) 7);
                return len;
            }

            @Override
            public void close() {
                sourceClosed.set(true);
            }
        };
        NativeWrites.Write w = writes.begin(Payload.ofStream(endless), "the test write");
        InputStream in = w.payload().open();
        assertEquals(7, in.read());
        in.close(); // the write is over for the backend; the caller's Write is not closed yet
        awaitTrue(sourceClosed::get, "the caller's source is still read after the write's stream was closed");
        w.close();
    }

    /** A tar stream is read through the source and left open: the caller owns it. */
    @Test
    void aTarStreamIsReadThroughAndLeftOpenForItsCaller() throws Exception {
        AtomicBoolean closed = new AtomicBoolean();
        byte[] data = pattern(1000);
        InputStream tar = new java.io.FilterInputStream(new ByteArrayInputStream(data)) {
            @Override
            public void close() {
                closed.set(true);
            }
        };
        NativeWrites.Write w = writes.begin(tar, "the copy");
        assertArrayEquals(data, w.stream().readAllBytes());
        w.close();
        assertFalse(closed.get(), "the caller's tar stream was closed for it");
        writes.abortAll(0);
        assertThrows(EnvironmentClosedException.class, () -> writes.begin(new ByteArrayInputStream(data), "a later copy"),
                "a copy was started on a closed environment");
        EnvironmentClosedException e = assertThrows(EnvironmentClosedException.class,
                () -> writes.begin(Payload.of(data), "the write to /x"));
        assertEquals("the environment is closed; the write to /x was not started; open a new one", e.getMessage());
    }

    /** A write re-entered for the same content shares its source; its end is not the outer write's. */
    @Test
    void aReenteredWriteSharesTheSourceAndDoesNotEndTheOuterOne() throws Exception {
        byte[] data = pattern(5000);
        Payload content = Payload.ofStream(new ByteArrayInputStream(data));
        NativeWrites.Write outer = writes.begin(content, "the outer write");
        NativeWrites.Write inner = writes.begin(outer.payload(), "the inner write");
        assertSame(outer.payload(), inner.payload(), "a re-entered write got a second source");
        inner.close();
        assertArrayEquals(data, inner.payload().open().readAllBytes(), "the inner write's end stopped the outer one's source");
        Thread closer = new Thread(() -> writes.abortAll(TimeUnit.MILLISECONDS.toNanos(10 * HANG_MS)));
        closer.start();
        closer.join(200);
        assertTrue(closer.isAlive(), "close did not wait for the outer write, which still runs");
        outer.close();
        closer.join(HANG_MS);
        assertFalse(closer.isAlive(), "close still waits for a write that returned");
    }

    /** Close waits for writes in flight, but no longer than its bound, and an interrupt ends the wait. */
    @Test
    void closeWaitsForWritesInFlightWithinItsBoundOrUntilInterrupted() throws Exception {
        NativeWrites.Write w = writes.begin(Payload.of(new byte[] {1}), "the test write");
        Thread bounded = new Thread(() -> writes.abortAll(TimeUnit.MILLISECONDS.toNanos(50)));
        bounded.start();
        bounded.join(HANG_MS);
        assertFalse(bounded.isAlive(), "close waited past its bound for a write that never returned");

        boolean[] flagged = new boolean[1];
        Thread interrupted = new Thread(() -> {
            writes.abortAll(TimeUnit.MILLISECONDS.toNanos(10 * HANG_MS));
            flagged[0] = Thread.currentThread().isInterrupted();
        });
        interrupted.start();
        interrupted.join(200);
        assertTrue(interrupted.isAlive(), "close did not wait for a write in flight");
        interrupted.interrupt();
        interrupted.join(HANG_MS);
        assertFalse(interrupted.isAlive(), "an interrupted close still waits");
        assertTrue(flagged[0], "close swallowed the interrupt");
        w.close();
    }

    private static InputStream failing(RuntimeException e) {
        return new InputStream() {
            @Override
            public int read() {
                throw e;
            }
        };
    }

    private static InputStream failing(IOException e) {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                throw e;
            }
        };
    }

    private static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + i / 251);
        }
        return b;
    }

    private static void awaitTrue(java.util.function.BooleanSupplier done, String what) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HANG_MS);
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < until, what);
            Thread.sleep(10);
        }
    }
}
