package dev.airlock.vercel.emulator;

import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Reads a tar stream entry by entry without holding an entry in memory: ustar headers (name and
 * prefix), GNU long names ({@code L}) and pax {@code path}/{@code size} records, base-256 sizes.
 * What {@code fs/write} receives from tar-stream (the official SDK) and from Airlock's client.
 */
final class TarEntries {
    /** One entry: its path (relative as sent), mode bits, type and a stream over exactly its bytes. */
    record Entry(String name, int mode, char type, long size, InputStream data) {
        boolean file() {
            return type == '0' || type == '\0' || type == '7';
        }

        boolean directory() {
            return type == '5';
        }
    }

    /** The largest long-name or pax record read (they are held whole): 1 MiB. */
    static final int MAX_META = 1 << 20;

    /** An archive this reader refuses: not a transport error, a bad request. */
    static final class Malformed extends IOException {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message);
        }
    }

    private final InputStream in;
    private long pendingSkip;
    private BoundedStream current;

    TarEntries(InputStream in) {
        this.in = in;
    }

    /** The next entry, or empty at the end of the archive; the previous entry's unread bytes are skipped. */
    Optional<Entry> next() throws IOException {
        String longName = null;
        Long paxSize = null;
        while (true) {
            if (current != null) {
                current.skipRest();
                current = null;
            }
            skipFully(pendingSkip);
            pendingSkip = 0;
            byte[] h = in.readNBytes(512);
            if (h.length == 0) {
                return Optional.empty();
            }
            if (h.length < 512) {
                throw new EOFException("the tar archive ends inside a header");
            }
            if (allZero(h)) {
                return Optional.empty();
            }
            char type = (char) h[156];
            long size = number(h, 124, 12);
            long padded = (size + 511) / 512 * 512;
            if (type == 'L' || type == 'x' || type == 'g') {
                if (size > MAX_META) {
                    // Read whole into memory, so bounded: a name or a few pax records are far smaller.
                    throw new Malformed("a tar metadata entry ('" + type + "') of " + size + " bytes; at most " + MAX_META);
                }
                byte[] meta = in.readNBytes((int) size);
                skipFully(padded - size);
                if (type == 'L') {
                    longName = cString(meta, 0, meta.length);
                } else if (type == 'x') {
                    String pax = new String(meta, StandardCharsets.UTF_8);
                    for (String rec : pax.split("\n")) {
                        int sp = rec.indexOf(' ');
                        int eq = rec.indexOf('=');
                        if (sp < 0 || eq < sp) {
                            continue;
                        }
                        String k = rec.substring(sp + 1, eq);
                        String v = rec.substring(eq + 1);
                        if (k.equals("path")) {
                            longName = v;
                        } else if (k.equals("size")) {
                            paxSize = Long.parseLong(v);
                        }
                    }
                }
                continue;
            }
            if (paxSize != null) {
                size = paxSize;
                padded = (size + 511) / 512 * 512;
            }
            String name = longName;
            if (name == null) {
                name = cString(h, 0, 100);
                String prefix = cString(h, 345, 155);
                if (!prefix.isEmpty() && "ustar".equals(cString(h, 257, 5))) {
                    name = prefix + "/" + name;
                }
            }
            int mode = (int) (number(h, 100, 8) & 07777);
            boolean hasData = type == '0' || type == '\0' || type == '7';
            if (!hasData) {
                pendingSkip = padded;
                return Optional.of(new Entry(name, mode, type, 0, InputStream.nullInputStream()));
            }
            pendingSkip = padded - size;
            current = new BoundedStream(in, size);
            return Optional.of(new Entry(name, mode, type, size, current));
        }
    }

    private void skipFully(long n) throws IOException {
        while (n > 0) {
            long s = in.skip(n);
            if (s <= 0) {
                if (in.read() < 0) {
                    throw new EOFException("the tar archive ends inside an entry");
                }
                s = 1;
            }
            n -= s;
        }
    }

    private static boolean allZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    private static String cString(byte[] b, int off, int len) {
        int end = off;
        while (end < off + len && b[end] != 0) {
            end++;
        }
        return new String(b, off, end - off, StandardCharsets.UTF_8);
    }

    private static long number(byte[] b, int off, int len) throws IOException {
        if ((b[off] & 0x80) != 0) { // base-256, for sizes past 8 GiB
            long v = b[off] & 0x7f;
            for (int i = 1; i < len; i++) {
                v = (v << 8) | (b[off + i] & 0xff);
            }
            return v;
        }
        String s = cString(b, off, len).trim();
        if (s.isEmpty()) {
            return 0;
        }
        try {
            return Long.parseLong(s, 8);
        } catch (NumberFormatException e) {
            throw new Malformed("a tar header field is not octal: " + s);
        }
    }

    /** Exactly {@code size} bytes of the underlying stream; closing it does not close the archive. */
    private static final class BoundedStream extends FilterInputStream {
        private long left;

        BoundedStream(InputStream in, long size) {
            super(in);
            this.left = size;
        }

        @Override
        public int read() throws IOException {
            if (left <= 0) {
                return -1;
            }
            int b = super.read();
            if (b < 0) {
                throw new EOFException("the tar archive ends inside an entry");
            }
            left--;
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (left <= 0) {
                return -1;
            }
            int n = super.read(b, off, (int) Math.min(len, left));
            if (n < 0) {
                throw new EOFException("the tar archive ends inside an entry");
            }
            left -= n;
            return n;
        }

        void skipRest() throws IOException {
            byte[] buf = new byte[8192];
            while (left > 0) {
                read(buf, 0, (int) Math.min(buf.length, left));
            }
        }

        @Override
        public void close() {
            // the archive goes on
        }
    }
}
