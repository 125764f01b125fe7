package dev.airlock.exec;

import dev.airlock.EnvironmentClosedException;
import dev.airlock.Payload;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
}
