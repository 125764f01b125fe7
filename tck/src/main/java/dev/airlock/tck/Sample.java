package dev.airlock.tck;

import dev.airlock.spi.BulkInputStream;
import dev.airlock.Payload;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * A payload the kit sends and expects back: small ones are literal bytes, large ones are generated
 * from a seed, so memory stays bounded by a buffer however big they are.
 */
public final class Sample {
    public static final long KIB = 1024;
    public static final long MIB = 1024 * KIB;

    private final String name;
    private final long size;
    private final byte[] fixed; // the literal bytes of a small sample, or null
    private final Supplier<InputStream> source; // fresh streams of a generated sample

    private Sample(String name, long size, byte[] fixed, Supplier<InputStream> source) {
        this.name = name;
        this.size = size;
        this.fixed = fixed;
        this.source = source;
    }

    /** Literal bytes. */
    public static Sample of(String name, byte[] bytes) {
        byte[] copy = bytes.clone();
        return new Sample(name, copy.length, copy, () -> new ByteArrayInputStream(copy));
    }

    /** Seeded pseudo-random bytes; {@code zeros > 0} makes about one byte in {@code zeros} a NUL. */
    public static Sample generated(String name, long size, long seed, int zeros) {
        return new Sample(name, size, null, () -> new Generated(size, seed, zeros));
    }

    /** The payloads every byte-exact route must carry exactly (64 MiB is separate: {@link #huge()}). */
    public static List<Sample> standard() {
        byte[] all = new byte[256];
        for (int i = 0; i < 256; i++) {
            all[i] = (byte) i;
        }
        return List.of(
                of("empty", new byte[0]),
                of("1 byte (NUL)", new byte[] {0}),
                of("no trailing newline", "first line\nlast line without newline".getBytes(StandardCharsets.UTF_8)),
                of("CR, CRLF and a final blank line", "a\r\nb\rc\n\n".getBytes(StandardCharsets.UTF_8)),
                of("all 256 byte values", all),
                of("invalid UTF-8", new byte[] {(byte) 0xC3, 0x28, (byte) 0xA0, (byte) 0xA1, (byte) 0xE2, 0x28,
                        (byte) 0xA1, (byte) 0xF0, 0x28, (byte) 0x8C, (byte) 0xBC, (byte) 0xC0, (byte) 0xAF,
                        (byte) 0xED, (byte) 0xA0, (byte) 0x80, (byte) 0x80, (byte) 0xFF, (byte) 0xFE, '\n', (byte) 0xF8}),
                generated("160 KiB with NUL bytes", 160 * KIB, 160, 4),
                generated("8 MiB", 8 * MIB, 8, 0));
    }

    /** 64 MiB: sent once per route, streamed and compared by digest. */
    public static Sample huge() {
        return generated("64 MiB", 64 * MIB, 64, 16);
    }

    public String name() {
        return name;
    }

    public long size() {
        return size;
    }

    /** The bytes of a literal sample. */
    public byte[] bytes() {
        if (fixed == null) {
            throw new IllegalStateException(name + " is generated; stream it with open()");
        }
        return fixed.clone();
    }

    /** A fresh stream of exactly these bytes. */
    public InputStream open() {
        return source.get();
    }

    /** A payload of known length (a stream payload is delivered once: call this per use). */
    public Payload payload() {
        return fixed != null ? Payload.of(fixed) : Payload.ofStream(open(), size);
    }

    /** A payload of unknown length, read to its end. */
    public Payload unknownLengthPayload() {
        return Payload.ofStream(open());
    }

    /** The first {@code n} bytes. */
    public Sample prefix(long n) {
        long len = Math.min(n, size);
        return new Sample(name + " (first " + len + " bytes)", len, null, () -> new Limited(open(), len));
    }

    /** Every other {@code block}-sized block, starting with block {@code first} (0 or 1). */
    public Sample alternateBlocks(int block, int first) {
        long blocks = (size + block - 1) / block;
        long size = 0;
        for (long b = first; b < blocks; b += 2) {
            size += Math.min(block, this.size - b * block);
        }
        return new Sample(name + (first == 0 ? " (even " : " (odd ") + block + "-byte blocks)", size, null,
                () -> new Alternate(open(), block, first));
    }

    @Override
    public String toString() {
        return name;
    }

    /** Deterministic bytes from a seed, produced 8 at a time. */
    private static final class Generated extends InputStream {
        private final SplittableRandom random;
        private final int zeros;
        private long remaining;
        private long word;
        private int wordLeft;

        Generated(long size, long seed, int zeros) {
            this.random = new SplittableRandom(seed);
            this.zeros = zeros;
            this.remaining = size;
        }

        private byte next() {
            if (wordLeft == 0) {
                word = random.nextLong();
                wordLeft = 8;
            }
            byte b = (byte) word;
            word >>>= 8;
            wordLeft--;
            return zeros > 0 && (b & 0xff) % zeros == 0 ? 0 : b;
        }

        @Override
        public int read() {
            if (remaining == 0) {
                return -1;
            }
            remaining--;
            return next() & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (len == 0) {
                return 0;
            }
            if (remaining == 0) {
                return -1;
            }
            int n = (int) Math.min(len, remaining);
            for (int i = 0; i < n; i++) {
                b[off + i] = next();
            }
            remaining -= n;
            return n;
        }
    }

    private static final class Limited extends BulkInputStream {
        private final InputStream in;
        private long remaining;

        Limited(InputStream in, long limit) {
            this.in = in;
            this.remaining = limit;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (remaining == 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, remaining));
            if (n > 0) {
                remaining -= n;
            }
            return n;
        }
    }

    private static final class Alternate extends BulkInputStream {
        private final InputStream in;
        private final int block;
        private final int first;
        private final byte[] scratch = new byte[8192];
        private long position;

        Alternate(InputStream in, int block, int first) {
            this.in = in;
            this.block = block;
            this.first = first;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            while (true) {
                long index = position / block;
                int leftInBlock = (int) (block - position % block);
                if (index % 2 != first) {
                    long skipped = discard(leftInBlock);
                    if (skipped < leftInBlock) {
                        return -1;
                    }
                    position += leftInBlock;
                    continue;
                }
                int n = in.read(b, off, Math.min(len, leftInBlock));
                if (n > 0) {
                    position += n;
                }
                return n;
            }
        }

        private long discard(int n) throws IOException {
            long done = 0;
            while (done < n) {
                int r = in.read(scratch, 0, (int) Math.min(scratch.length, n - done));
                if (r < 0) {
                    break;
                }
                done += r;
            }
            return done;
        }
    }
}
