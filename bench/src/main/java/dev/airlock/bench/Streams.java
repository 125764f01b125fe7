package dev.airlock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** Input generated on the fly (no disk on either side) and output counted and dropped. */
final class Streams {
    private static final byte[] BLOCK = new byte[64 * 1024];

    static {
        java.util.Random r = new java.util.Random(19);
        r.nextBytes(BLOCK); // not compressible, the same on both sides
    }

    private Streams() {
    }

    /** {@code length} bytes repeating one random 64 KiB block. */
    static InputStream generated(long length) {
        return new InputStream() {
            private long left = length;

            @Override
            public int read() {
                if (left <= 0) {
                    return -1;
                }
                return BLOCK[(int) ((length - left--) % BLOCK.length)] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (left <= 0) {
                    return -1;
                }
                int pos = (int) ((length - left) % BLOCK.length);
                int n = (int) Math.min(Math.min(len, left), BLOCK.length - pos);
                System.arraycopy(BLOCK, pos, b, off, n);
                left -= n;
                return n;
            }
        };
    }

    static long drain(InputStream in) throws IOException {
        byte[] buf = new byte[64 * 1024];
        long n = 0;
        try (in) {
            for (int r; (r = in.read(buf)) >= 0; ) {
                n += r;
            }
        }
        return n;
    }

    /** An output stream that counts and drops. */
    static final class Counter extends OutputStream {
        private long count;

        @Override
        public void write(int b) {
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            count += len;
        }

        long count() {
            return count;
        }
    }

    static void expect(long want, long got, String what) throws IOException {
        if (want != got) {
            throw new IOException(what + ": " + got + " bytes instead of " + want);
        }
    }
}
