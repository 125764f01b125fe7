package dev.airlock;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The bytes a command wrote to one stream, exactly as written, up to the capture cap. At most
 * about 1 MiB lives in the heap; the rest sits in a 0600 temp file that goes with the result: it
 * is deleted when this value is closed ({@link #close()}, or {@link ExecResult#close()}) or is no
 * longer reachable, and stays readable after the environment closed.
 */
public final class CapturedOutput implements AutoCloseable {
    private static final CapturedOutput EMPTY = new CapturedOutput(new byte[0], 0, null, 0, 0);

    private final byte[] head;
    private final int headLength;
    private final Path spill;
    private final long spillLength;
    private final long dropped;

    /** For the core's capture; callers receive instances, they do not build them. */
    public CapturedOutput(byte[] head, int headLength, Path spill, long spillLength, long dropped) {
        this.head = head;
        this.headLength = headLength;
        this.spill = spill;
        this.spillLength = spillLength;
        this.dropped = dropped;
    }

    /** Nothing captured (the stream was sent to the caller's sink, or the command wrote nothing). */
    public static CapturedOutput empty() {
        return EMPTY;
    }

    /** The number of bytes kept. */
    public long size() {
        return headLength + spillLength;
    }

    /** Bytes the command wrote beyond the cap; they were counted, not kept. */
    public long dropped() {
        return dropped;
    }

    /** Streams the kept bytes. */
    public InputStream open() {
        InputStream first = new ByteArrayInputStream(head, 0, headLength);
        if (spill == null) {
            return first;
        }
        try {
            return new SequenceInputStream(first, Files.newInputStream(spill));
        } catch (IOException e) {
            throw new UncheckedIOException("captured output is gone (was the result closed, or the temp dir cleaned?): " + e.getMessage(), e);
        }
    }

    /** The kept bytes as one array; prefer {@link #open()} for large output. */
    public byte[] bytes() {
        if (size() > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException("captured output of " + size() + " bytes does not fit in an array; use open()");
        }
        try (InputStream in = open()) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The kept bytes decoded as UTF-8 (invalid sequences become U+FFFD; use {@link #bytes()} for exactness). */
    public String text() {
        return new String(bytes(), StandardCharsets.UTF_8);
    }

    /**
     * Deletes the spill file now (output over the heap part lives in one); afterwards only the
     * heap part can be read. Without a close the file goes when this value is garbage collected.
     * Closing the environment leaves the captured output of results already returned readable.
     */
    @Override
    public void close() {
        if (spill != null) {
            try {
                Files.deleteIfExists(spill);
            } catch (IOException ignored) {
                // already gone
            }
        }
    }

    @Override
    public String toString() {
        return "CapturedOutput[" + size() + " bytes" + (dropped > 0 ? ", " + dropped + " dropped" : "") + "]";
    }
}
