package dev.airlock.ssh;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The per-channel buffer: bytes in order through memory and the spill file, and a bounded writer. */
class ChannelBufferTest {

    @Test
    void bytesComeOutInOrderThroughMemoryAndTheSpillFile() throws Exception {
        ChannelBuffer b = new ChannelBuffer(64L << 20);
        byte[] data = new byte[5 << 20];
        new Random(1).nextBytes(data);
        // Nobody reads yet: 1 MiB in memory, the rest in the file, and the writer never waited.
        for (int i = 0; i < data.length; i += 7000) {
            b.sink.write(data, i, Math.min(7000, data.length - i));
        }
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[3000];
        while (got.size() < data.length) {
            got.write(buf, 0, b.source.read(buf));
        }
        assertArrayEquals(data, got.toByteArray());
        // Caught up: memory again, then end-of-output after what is left.
        b.sink.write(new byte[] {1, 2, 3});
        b.sink.close();
        assertArrayEquals(new byte[] {1, 2, 3}, b.source.readAllBytes());
        assertEquals(-1, b.source.read());
    }

    /** Writes and reads of any size, on two threads, cut across chunks: the exact bytes, in order. */
    @Test
    void anyCutOfWritesAndReadsOnTwoThreadsKeepsTheBytes() throws Exception {
        ChannelBuffer b = new ChannelBuffer(64L << 20);
        byte[] data = new byte[24 << 20];
        new Random(2).nextBytes(data);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            Random r = new Random(3);
            try {
                for (int i = 0; i < data.length; ) {
                    int n = Math.min(data.length - i, r.nextInt(3) == 0 ? 1 + r.nextInt(100) : 1 + r.nextInt(3 * ChannelBuffer.CHUNK));
                    b.sink.write(data, i, n);
                    i += n;
                }
                b.sink.close();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        Random r = new Random(4);
        byte[] buf = new byte[2 * ChannelBuffer.CHUNK + 17];
        for (int n; (n = b.source.read(buf, 0, 1 + r.nextInt(buf.length))) != -1; ) {
            got.write(buf, 0, n);
        }
        writer.get(60, TimeUnit.SECONDS);
        assertArrayEquals(data, got.toByteArray());
    }

    /** A reader that keeps up gets the same few chunks back, not an array per packet. */
    @Test
    void aReaderThatKeepsUpReusesTheSameChunks() throws Exception {
        ChannelBuffer b = new ChannelBuffer(64L << 20);
        byte[] packet = new byte[ChannelBuffer.CHUNK];
        byte[] buf = new byte[8192];
        long written = 0;
        long read = 0;
        for (int i = 0; i < 2048; i++) {
            packet[0] = (byte) i;
            int n = i % 2 == 0 ? packet.length : 7000;
            b.sink.write(packet, 0, n);
            written += n;
            while (read < written) {
                read += b.source.read(buf);
            }
        }
        assertEquals(written, read);
        assertTrue(b.chunksMade() <= 3, "chunks allocated for 2048 packets read as they came: " + b.chunksMade());
    }

    @Test
    void theWriterWaitsOnlyPastTheLimitAndAClosedReaderDropsEverything() throws Exception {
        ChannelBuffer b = new ChannelBuffer(ChannelBuffer.MEMORY * 2L);
        b.sink.write(new byte[ChannelBuffer.MEMORY * 2]);
        assertFalse(b.writerWaiting());
        CompletableFuture<Void> blocked = CompletableFuture.runAsync(() -> {
            try {
                b.sink.write(new byte[] {9});
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        for (int i = 0; i < 500 && !b.writerWaiting(); i++) {
            Thread.sleep(10);
        }
        assertTrue(b.writerWaiting(), "a writer past the limit waits for the reader");
        byte[] first = b.source.readNBytes(10);
        assertTrue(Arrays.equals(new byte[10], first));
        blocked.get(30, TimeUnit.SECONDS);
        b.source.close();
        b.sink.write(new byte[ChannelBuffer.MEMORY * 4]); // dropped, never blocks
        assertEquals(-1, b.source.read());
    }
}
