package dev.airlock;

import dev.airlock.spi.BulkInputStream;
import java.io.ByteArrayInputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Bytes to deliver to a target: a command's stdin or a file's content. Delivered exactly, streamed
 * in chunks, never through argv. A payload built from a stream can be opened once.
 */
public final class Payload {
    private static final byte[] EMPTY_BYTES = new byte[0];
    private static final Payload EMPTY = new Payload(null, EMPTY_BYTES, null, 0);

    private final Path file;
    private final byte[] bytes;
    private final InputStream stream;
    private final long length; // -1 when unknown
    private boolean opened;

    private Payload(Path file, byte[] bytes, InputStream stream, long length) {
        this.file = file;
        this.bytes = bytes;
        this.stream = stream;
        this.length = length;
    }

    public static Payload empty() {
        return EMPTY;
    }

    /** The given bytes (not copied: do not change the array afterwards). */
    public static Payload of(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        return new Payload(null, bytes, null, bytes.length);
    }

    /** The UTF-8 bytes of {@code text}. */
    public static Payload ofUtf8(String text) {
        return of(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** The content of a local file, read when delivered. */
    public static Payload ofFile(Path file) {
        Objects.requireNonNull(file, "file");
        try {
            return new Payload(file, null, null, Files.size(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /** A stream of known length; exactly {@code length} bytes are read from it. */
    public static Payload ofStream(InputStream in, long length) {
        Objects.requireNonNull(in, "in");
        if (length < 0) {
            throw new IllegalArgumentException("length must be >= 0, got " + length);
        }
        return new Payload(null, null, in, length);
    }

    /** A stream of unknown length, read to its end. */
    public static Payload ofStream(InputStream in) {
        Objects.requireNonNull(in, "in");
        return new Payload(null, null, in, -1);
    }

    /** The length in bytes, when known before delivery. */
    public OptionalLong length() {
        return length < 0 ? OptionalLong.empty() : OptionalLong.of(length);
    }

    /** Whether this payload can be opened more than once (bytes and files can, streams cannot). */
    public boolean isRepeatable() {
        return stream == null;
    }

    /**
     * Opens the bytes. The caller closes the returned stream. A stream-backed payload can be
     * opened once; its stream is bounded to the declared length.
     */
    public synchronized InputStream open() throws IOException {
        if (bytes != null) {
            return new ByteArrayInputStream(bytes);
        }
        if (file != null) {
            // A FileInputStream, so a backend on this host can copy it kernel-side (getChannel().transferTo).
            Files.newByteChannel(file).close(); // the same NoSuchFileException or AccessDeniedException as before
            return new FileInputStream(file.toFile());
        }
        if (opened) {
            throw new IllegalStateException("a stream payload can be delivered only once");
        }
        opened = true;
        return length < 0 ? stream : new BoundedInputStream(stream, length);
    }

    @Override
    public String toString() {
        // Never the content: payloads may hold secrets.
        return "Payload[" + (length < 0 ? "unknown length" : length + " bytes") + "]";
    }

    /** Reads at most {@code limit} bytes, and reports a short source instead of padding it. */
    private static final class BoundedInputStream extends BulkInputStream {
        private final InputStream in;
        private final long declared;
        private long remaining;

        BoundedInputStream(InputStream in, long limit) {
            this.in = in;
            this.declared = limit;
            this.remaining = limit;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (remaining == 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, remaining));
            if (n < 0) {
                throw new IOException("payload stream ended after " + (declared - remaining)
                        + " of its declared " + declared + " bytes");
            }
            remaining -= n;
            return n;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
