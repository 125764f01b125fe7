package dev.airlock.modal.emulator;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One output stream of an exec, kept whole on disk until its sandbox ends: the SDK may wait for
 * the exit before it reads stdout from offset 0, and a resumed read asks for any offset again.
 * On disk rather than in the heap, so many large outputs do not exhaust the emulator's memory.
 */
final class OutputLog {
    private final Path file;
    private final RandomAccessFile data;
    private long size;
    private boolean closed;
    private boolean deleted;

    OutputLog(Path dir) {
        try {
            Files.createDirectories(dir);
            this.file = Files.createTempFile(dir, "out-", ".log");
            this.data = new RandomAccessFile(file.toFile(), "rw");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create an output log in " + dir, e);
        }
    }

    synchronized void append(byte[] b, int off, int len) {
        if (deleted) {
            return; // the sandbox ended: output of its last processes is dropped
        }
        try {
            data.seek(size);
            data.write(b, off, len);
            size += len;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
        while (size <= offset && !closed) {
            wait();
        }
        if (size <= offset || deleted) {
            return new byte[0];
        }
        byte[] out = new byte[(int) Math.min(size - offset, max)];
        try {
            data.seek(offset);
            data.readFully(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** Frees the file (the sandbox ended). */
    synchronized void delete() {
        closed = true;
        deleted = true;
        notifyAll();
        try {
            data.close();
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // best effort: the state dir goes with the emulator
        }
    }
}
