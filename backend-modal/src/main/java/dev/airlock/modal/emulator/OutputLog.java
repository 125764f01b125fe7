package dev.airlock.modal.emulator;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/**
 * One output stream of an exec, kept whole until the emulator closes: the SDK may wait for the
 * exit before it reads stdout from offset 0, and a resumed read asks for any offset again.
 */
final class OutputLog {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private boolean closed;

    synchronized void append(byte[] b, int off, int len) {
        bytes.write(b, off, len);
        notifyAll();
    }

    synchronized void close() {
        closed = true;
        notifyAll();
    }

    /**
     * The bytes from {@code offset}, at most {@code max}; blocks until some exist. Empty means the
     * stream ended (closed and nothing left at that offset).
     */
    synchronized byte[] read(long offset, int max) throws InterruptedException {
        while (bytes.size() <= offset && !closed) {
            wait();
        }
        if (bytes.size() <= offset) {
            return new byte[0];
        }
        int from = (int) offset;
        int to = (int) Math.min(bytes.size(), offset + max);
        // toByteArray copies the whole buffer; fine for the sizes tests move (outputs stay small).
        return Arrays.copyOfRange(bytes.toByteArray(), from, to);
    }
}
