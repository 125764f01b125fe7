package dev.airlock.spi;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The two pipes a pushing transport writes a command's output to. */
class OutputPipesTest {

    @Test
    void eachOutputReachesItsOwnReaderByteForByteThroughASmallBuffer() throws Exception {
        OutputPipes p = new OutputPipes(7);
        byte[] out = new byte[100_000];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) (i * 31);
        }
        CompletableFuture<byte[]> readOut = CompletableFuture.supplyAsync(() -> readAll(p.stdout()));
        CompletableFuture<byte[]> readErr = CompletableFuture.supplyAsync(() -> readAll(p.stderr()));
        assertTrue(p.out.offer(out, 0, out.length), "waits while full, then takes it all");
        assertTrue(p.err.offer("e\0rr".getBytes(StandardCharsets.UTF_8), 0, 4));
        p.end();
        assertArrayEquals(out, readOut.get(10, TimeUnit.SECONDS));
        assertArrayEquals("e\0rr".getBytes(StandardCharsets.UTF_8), readErr.get(10, TimeUnit.SECONDS));
    }

    @Test
    void anOfferAfterTheReaderClosedItsOutputIsDroppedAndTheOtherOutputStillFlows() throws Exception {
        OutputPipes p = new OutputPipes(4);
        p.stdout().close();
        assertFalse(p.out.offer(new byte[10], 0, 10), "nobody reads stdout");
        assertFalse(p.out.offer(new byte[1], 0, 1), "still nobody, at once");
        assertTrue(p.err.offer(new byte[] {1, 2, 3}, 0, 3));
        p.end();
        assertArrayEquals(new byte[] {1, 2, 3}, p.stderr().readAllBytes());
        assertThrows(IOException.class, () -> p.out.sink.write(1), "the stream form fails instead");
    }

    @Test
    void aWriterBlockedOnAFullPipeIsFreedWhenTheReaderCloses() throws Exception {
        OutputPipes p = new OutputPipes(2);
        CompletableFuture<Boolean> offer = CompletableFuture.supplyAsync(() -> {
            try {
                return p.out.offer(new byte[10], 0, 10);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        assertEquals(0, p.stdout().read(), "a byte arrives");
        p.stdout().close();
        assertFalse(offer.get(10, TimeUnit.SECONDS), "the rest dropped, not waited for");
    }

    @Test
    void aFailureReachesBothReadersAfterWhatWasBuffered() throws Exception {
        OutputPipes p = new OutputPipes(16);
        p.out.offer(new byte[] {'o'}, 0, 1);
        p.fail(new IOException("the stream broke"));
        assertEquals('o', p.stdout().read());
        assertEquals("the stream broke", assertThrows(IOException.class, () -> p.stdout().read()).getMessage());
        assertEquals("the stream broke", assertThrows(IOException.class, () -> p.stderr().read()).getMessage());
    }

    private static byte[] readAll(InputStream in) {
        try {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
