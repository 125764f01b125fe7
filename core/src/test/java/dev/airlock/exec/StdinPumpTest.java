package dev.airlock.exec;

import dev.airlock.Payload;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.spi.StdinClosedException;
import dev.airlock.spi.StdinWriter;
import org.junit.jupiter.api.Test;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The caller's stdin on its way to a command: through a pipe (flushed as it comes, closed at the
 * end or on a failure) or in chunks by offset through a streamed backend's writer (a writer that
 * fails kills the command; one whose command stopped reading does not).
 */
class StdinPumpTest {
    private static final long WAIT_S = 30;

    /** The caller's side of a live stdin: bytes written here reach the pump's source as they come. */
    private static final class LiveSource {
        final PipedOutputStream caller = new PipedOutputStream();
        final Payload payload;

        LiveSource() throws IOException {
            payload = Payload.ofStream(new PipedInputStream(caller, 1 << 16));
        }
    }

    /** A streamed backend's writer that keeps what it was sent, checking each chunk's offset. */
    private static final class KeepingWriter implements StdinWriter {
        final ByteArrayOutputStream got = new ByteArrayOutputStream();
        final List<Long> ends = new ArrayList<>();
        final AtomicInteger writes = new AtomicInteger();
        volatile IOException failAt2;

        @Override
        public void write(RemoteProcess process, long offset, byte[] data, int length, Deadline deadline) throws IOException {
            if (writes.incrementAndGet() == 2 && failAt2 != null) {
                throw failAt2;
            }
            assertEquals(got.size(), offset, "each chunk at the offset where the last one ended");
            assertTrue(length > 0 && length <= CHUNK, "a chunk of 1.." + CHUNK + " bytes: " + length);
            got.write(data, 0, length);
        }

        @Override
        public void end(RemoteProcess process, long length, Deadline deadline) {
            ends.add(length);
        }
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        new Random(n).nextBytes(b);
        b[0] = 0;
        return b;
    }

    private static void runToEnd(StdinPump pump) throws Exception {
        CompletableFuture.runAsync(pump).get(WAIT_S, TimeUnit.SECONDS);
    }

    @Test
    void aLiveSourcesBytesReachThePipeAsTheyComeNotWhenItEnds() throws Exception {
        LiveSource source = new LiveSource();
        PipedInputStream command = new PipedInputStream(1 << 16);
        // The process's stdin is buffered, as Process's own is: only a flush hands the bytes over.
        BufferedOutputStream stdin = new BufferedOutputStream(new PipedOutputStream(command), 8192);
        StdinPump pump = StdinPump.pipe(stdin, source.payload, () -> { });
        CompletableFuture<Void> running = CompletableFuture.runAsync(pump);
        source.caller.write("ping\n".getBytes());
        source.caller.flush();
        byte[] first = CompletableFuture.supplyAsync(() -> {
            try {
                return command.readNBytes(5);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }).get(WAIT_S, TimeUnit.SECONDS);
        assertArrayEquals("ping\n".getBytes(), first, "the command must see the first line while the source stays open");
        source.caller.close();
        running.get(WAIT_S, TimeUnit.SECONDS);
        assertEquals(-1, command.read(), "the source's end is the command's end of input");
        assertNull(pump.failure());
        assertNull(pump.transportFailure());
    }

    @Test
    void aFailingSourceEndsThePipeAndRunsTheFailureCallbackOnce() throws Exception {
        PipedInputStream command = new PipedInputStream(1 << 16);
        PipedOutputStream stdin = new PipedOutputStream(command);
        IOException broke = new IOException("the caller's file went away");
        InputStream failing = new InputStream() {
            private int left = 3;

            @Override
            public int read() throws IOException {
                if (left-- > 0) {
                    return 'x';
                }
                throw broke;
            }
        };
        AtomicInteger killed = new AtomicInteger();
        StdinPump pump = StdinPump.pipe(stdin, Payload.ofStream(failing), killed::incrementAndGet);
        runToEnd(pump);
        assertSame(broke, pump.failure(), "the source's own failure is the exec's error");
        assertNull(pump.transportFailure(), "a source failure is not the command's end of the pipe");
        assertEquals(1, killed.get(), "the command must be killed: a short input must not pass for the whole");
        assertEquals(3, command.readAllBytes().length, "the pipe is closed after what the source gave");
    }

    @Test
    void aStreamedStdinGoesInChunksByOffsetThenEndsAtItsLength() throws Exception {
        byte[] data = bytes(StdinWriter.CHUNK * 2 + 12345);
        KeepingWriter writer = new KeepingWriter();
        AtomicInteger killed = new AtomicInteger();
        StdinPump pump = StdinPump.streamed(writer, null, Payload.of(data), killed::incrementAndGet);
        runToEnd(pump);
        assertArrayEquals(data, writer.got.toByteArray());
        assertEquals(List.of((long) data.length), writer.ends, "one end, at the total length");
        assertEquals(0, killed.get());
        assertNull(pump.transportFailure());
    }

    @Test
    void anEmptyStreamedStdinIsEndedAtZero() throws Exception {
        KeepingWriter writer = new KeepingWriter();
        runToEnd(StdinPump.streamed(writer, null, Payload.empty(), () -> { }));
        assertEquals(0, writer.writes.get());
        assertEquals(List.of(0L), writer.ends);
    }

    @Test
    void aStreamedWriterThatFailsKillsTheCommandAndSaysWhy() throws Exception {
        KeepingWriter writer = new KeepingWriter();
        writer.failAt2 = new IOException("the service refused the chunk");
        AtomicInteger killed = new AtomicInteger();
        StdinPump pump = StdinPump.streamed(writer, null, Payload.of(bytes(StdinWriter.CHUNK * 3)), killed::incrementAndGet);
        runToEnd(pump);
        assertEquals(1, killed.get(), "a stdin neither whole nor ended must not be left to the command");
        assertSame(writer.failAt2, pump.transportFailure());
        assertNull(pump.failure(), "the caller's source did not fail");
        assertEquals(List.of(), writer.ends, "a broken stdin is not ended as if it were whole");
    }

    @Test
    void aCommandThatStoppedReadingIsNotKilled() throws Exception {
        KeepingWriter writer = new KeepingWriter();
        writer.failAt2 = new StdinClosedException("the command closed its stdin");
        AtomicInteger killed = new AtomicInteger();
        StdinPump pump = StdinPump.streamed(writer, null, Payload.of(bytes(StdinWriter.CHUNK * 3)), killed::incrementAndGet);
        runToEnd(pump);
        assertEquals(0, killed.get(), "a command that stopped reading its stdin runs on, like a pipeline's");
        assertNull(pump.transportFailure());
    }

    @Test
    void endQuietlyEndsTheStreamWhereItStands() throws Exception {
        KeepingWriter writer = new KeepingWriter();
        StdinPump pump = StdinPump.streamed(writer, null, Payload.empty(), () -> { });
        pump.endQuietly();
        assertEquals(List.of(0L), writer.ends);
    }

    @Test
    void awaitEndDoesNotWaitForASourceThatNeverEnds() throws Exception {
        LiveSource source = new LiveSource(); // never written to, never closed: an agent's idle stdin
        StdinPump pump = StdinPump.pipe(new ByteArrayOutputStream(), source.payload, () -> { });
        CompletableFuture.runAsync(pump);
        CompletableFuture.runAsync(() -> {
            try {
                pump.awaitEnd();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }).get(WAIT_S, TimeUnit.SECONDS);
        source.caller.close();
    }
}
