package dev.airlock.vercel;

import java.io.IOException;
import java.io.OutputStream;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;

/**
 * gzip that compresses only while it pays. {@code fs/write} takes a gzipped tar, but most of
 * what agents write in bulk (archives, images, build output) is compressed already, and deflating
 * it at even the fastest level costs about 20 ms per MiB of CPU here for no gain (64 MiB of random
 * bytes: 1.3 s at level 1, 8 ms stored). So each {@link #WINDOW} of input gets its level from a
 * {@link #SAMPLE} of its start deflated at {@link Deflater#BEST_SPEED}: a sample that shrinks below
 * {@link #PAYS} of its size is deflated at that level, anything else goes in stored blocks. The
 * stream stays one valid gzip member whatever the mix; a change of level takes effect from the
 * next deflate call, as {@link Deflater#setLevel} documents.
 */
final class AdaptiveGzipOutputStream extends GZIPOutputStream {
    static final int WINDOW = 1 << 20;
    static final int SAMPLE = 64 << 10;
    /** Compressed size over input size below which deflating pays for its CPU. */
    static final double PAYS = 0.9;

    /**
     * Writes shorter than this (a tar header, the archive's padding and end) are too small a sample
     * to choose a window's level: they go at the current level (at first {@link Deflater#BEST_SPEED})
     * and leave the choice to the next larger write, for at most {@link #SAMPLE} bytes in a row.
     */
    static final int MIN_SAMPLE = 4 << 10;

    private final Deflater probe = new Deflater(Deflater.BEST_SPEED, true);
    private final byte[] scratch = new byte[SAMPLE + 1024];
    private long windowLeft;
    /** Bytes written since the last choice without making one. */
    private long undecided;

    AdaptiveGzipOutputStream(OutputStream out, int size) throws IOException {
        super(out, size);
        def.setLevel(Deflater.BEST_SPEED);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            if (windowLeft == 0) {
                if (len < MIN_SAMPLE && undecided + len <= SAMPLE) {
                    super.write(b, off, len);
                    undecided += len;
                    return;
                }
                def.setLevel(levelFor(b, off, Math.min(len, SAMPLE)));
                windowLeft = WINDOW;
                undecided = 0;
            }
            int n = (int) Math.min(len, windowLeft);
            super.write(b, off, n);
            off += n;
            len -= n;
            windowLeft -= n;
        }
    }

    /** {@link Deflater#BEST_SPEED} where the sample shrinks enough, else {@link Deflater#NO_COMPRESSION}. */
    int levelFor(byte[] b, int off, int len) {
        probe.reset();
        probe.setInput(b, off, len);
        probe.finish();
        long out = 0;
        while (!probe.finished()) {
            out += probe.deflate(scratch);
        }
        return out < len * PAYS ? Deflater.BEST_SPEED : Deflater.NO_COMPRESSION;
    }

    @Override
    public void finish() throws IOException {
        try {
            super.finish();
        } finally {
            probe.end();
        }
    }
}
