package dev.airlock.exec;

import dev.airlock.CapturedOutput;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.ref.Cleaner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * Collects one stream's bytes up to a cap: the first {@code heapLimit} bytes in memory, the rest in
 * a 0600 spill file, everything past the cap counted as dropped. Kept bytes are never altered.
 * Written by one drain thread.
 */
public final class OutputCapture extends OutputStream {
    private static final Cleaner CLEANER = Cleaner.create();

    private final long cap;
    private final int heapLimit;
    private final Supplier<Path> spillFiles;
    private byte[] head = new byte[8192];
    private int headLength;
    private OutputStream spillOut;
    private Path spill;
    private long spillLength;
    private long dropped;

    /**
     * @param cap        bytes to keep in all
     * @param heapLimit  bytes to keep in memory before spilling
     * @param spillFiles makes a fresh 0600 file when the heap part is full
     */
    public OutputCapture(long cap, int heapLimit, Supplier<Path> spillFiles) {
        this.cap = cap;
        this.heapLimit = heapLimit;
        this.spillFiles = spillFiles;
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        long kept = headLength + spillLength;
        int keep = (int) Math.max(0, Math.min(len, cap - kept));
        dropped += len - keep;
        int toHeap = Math.min(keep, heapLimit - headLength); // 0 once the heap part is full
        if (headLength + toHeap > head.length) {
            head = Arrays.copyOf(head, Math.min(heapLimit, Math.max(head.length * 2, headLength + toHeap)));
        }
        System.arraycopy(b, off, head, headLength, toHeap);
        headLength += toHeap;
        int toSpill = keep - toHeap;
        if (toSpill > 0) {
            if (spillOut == null) {
                spill = spillFiles.get();
                spillOut = new java.io.BufferedOutputStream(Files.newOutputStream(spill), 65536);
            }
            spillOut.write(b, off + toHeap, toSpill);
            spillLength += toSpill;
        }
    }

    /** How many more bytes this capture keeps. */
    public long room() {
        return Math.max(0, cap - headLength - spillLength);
    }

    /** Counts {@code n} bytes as dropped without receiving them (output that was never downloaded). */
    public void drop(long n) {
        dropped += n;
    }

    @Override
    public void close() throws IOException {
        if (spillOut != null) {
            spillOut.close();
        }
    }

    /** The result; call after {@link #close()}. The spill file is deleted once the result is unreachable. */
    public CapturedOutput result() {
        CapturedOutput out = new CapturedOutput(head, headLength, spill, spillLength, dropped);
        if (spill != null) {
            Path p = spill;
            CLEANER.register(out, () -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // best effort, as in CapturedOutput#close: a result handed out owns its file, so the
                    // environment's close does not delete it (it deletes only the spills of results never handed out)
                }
            });
        }
        return out;
    }

    /** The spill file, once the heap part overflowed; null before. */
    public Path spillPath() {
        return spill;
    }

    /** A fresh 0600 file in {@code dir}. */
    public static Path newSpillFile(Path dir) {
        try {
            return Files.createTempFile(dir, "out-", ".spill",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot create a spill file for captured output in " + dir, e);
        }
    }
}
