package dev.airlock.docker;

import dev.airlock.spi.BulkInputStream;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * A tar archive of one regular file, produced as it is read: a ustar header (name, mode, owner,
 * size, mtime), the content read from its source a buffer at a time, the padding and the two
 * end-of-archive blocks. Nothing beyond a header is held. A size past the 11 octal digits
 * (8 GiB) goes in the header's base-256 form, which Docker's Go tar reader takes. The source must
 * give exactly {@code size} bytes. A source that ends early, runs long or fails ends this stream
 * at once, before the archive's end blocks, and keeps the cause in {@link #failure()}: the upload
 * then completes as a request and the daemon answers it (an unexpected end of the archive) after
 * it stopped unpacking, so the caller's clean-up cannot run while the daemon still writes. Failing
 * the read instead would abort the request on this side only, and the daemon could create the
 * entry after the clean-up removed it. The daemon never receives a whole archive of other bytes
 * than declared: the caller reports {@link #failure()} whatever the daemon answered.
 */
final class TarEntryStream extends BulkInputStream {
    private static final int BLOCK = 512;
    private static final long OCTAL_MAX = 077777777777L;

    private final InputStream content;
    private final long size;
    private byte[] header;
    private int headerPos;
    private long sent;
    private long trailer;
    private boolean ended;
    private IOException failure;

    /**
     * @param name a plain file name (at most 100 bytes of UTF-8)
     * @param mode permission bits
     * @param uid  the owner's uid in the container
     * @param gid  the owner's gid in the container
     */
    TarEntryStream(String name, int mode, long uid, long gid, long size, long mtimeSeconds, InputStream content) {
        this.content = content;
        this.size = size;
        this.header = header(name, mode, uid, gid, size, mtimeSeconds);
        this.trailer = pad(size) + 2L * BLOCK;
    }

    /** The failure of the content source, if reading it failed (the upload saw only a broken stream). */
    IOException failure() {
        return failure;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        if (len == 0) {
            return 0;
        }
        if (failure != null) {
            return -1;
        }
        if (header != null) {
            int k = Math.min(len, header.length - headerPos);
            System.arraycopy(header, headerPos, b, off, k);
            headerPos += k;
            if (headerPos == header.length) {
                header = null;
            }
            return k;
        }
        if (sent < size) {
            int n;
            try {
                n = content.read(b, off, (int) Math.min(len, size - sent));
            } catch (IOException e) {
                return failed(e);
            }
            if (n < 0) {
                return failed(new IOException("the content to write ended after " + sent + " bytes, not the " + size
                        + " it declared; nothing was written"));
            }
            sent += n;
            return n;
        }
        if (!ended) {
            ended = true;
            if (!sourceEnded()) {
                return -1;
            }
        }
        if (trailer == 0) {
            return -1;
        }
        int k = (int) Math.min(len, trailer);
        java.util.Arrays.fill(b, off, off + k, (byte) 0);
        trailer -= k;
        return k;
    }

    /** Whether the source ended where it said it would; if not, the failure is kept. */
    private boolean sourceEnded() {
        int more;
        try {
            more = content.read();
        } catch (IOException e) {
            failed(e);
            return false;
        }
        if (more >= 0) {
            failed(new IOException("the content to write was longer than the " + size
                    + " bytes it declared; nothing was written"));
            return false;
        }
        return true;
    }

    /** Keeps the source's failure and ends this stream (-1). */
    private int failed(IOException e) {
        failure = e;
        return -1;
    }

    @Override
    public void close() throws IOException {
        content.close();
    }

    /** Whether a uid or gid fits the header's seven octal digits. */
    static boolean fitsOwner(long id) {
        return id >= 0 && id <= 07777777;
    }

    private static int pad(long size) {
        return (int) ((BLOCK - size % BLOCK) % BLOCK);
    }

    static byte[] header(String name, int mode, long uid, long gid, long size, long mtimeSeconds) {
        byte[] h = new byte[BLOCK];
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        if (utf8.length > 100 || name.contains("/")) {
            throw new IllegalArgumentException("a tar entry here is a plain name of at most 100 bytes: " + name);
        }
        System.arraycopy(utf8, 0, h, 0, utf8.length);
        octal(h, 100, 8, mode & 07777);
        octal(h, 108, 8, uid);
        octal(h, 116, 8, gid);
        if (size > OCTAL_MAX) {
            h[124] = (byte) 0x80; // base-256: a marker byte, then the size big-endian in the other 11
            for (int i = 0; i < 8; i++) {
                h[135 - i] = (byte) (size >>> (8 * i));
            }
        } else {
            octal(h, 124, 12, size);
        }
        octal(h, 136, 12, mtimeSeconds);
        h[156] = '0';
        System.arraycopy("ustar\0".getBytes(StandardCharsets.US_ASCII), 0, h, 257, 6);
        h[263] = '0';
        h[264] = '0';
        java.util.Arrays.fill(h, 148, 156, (byte) ' ');
        long sum = 0;
        for (byte x : h) {
            sum += x & 0xff;
        }
        octal(h, 148, 7, sum);
        return h;
    }

    /** {@code v} as zero-padded octal in {@code len - 1} digits and a NUL. */
    private static void octal(byte[] h, int off, int len, long v) {
        String s = Long.toOctalString(v);
        if (s.length() > len - 1) {
            throw new IllegalArgumentException("value " + v + " does not fit a tar header field of " + (len - 1) + " digits");
        }
        int start = off + len - 1 - s.length();
        java.util.Arrays.fill(h, off, start, (byte) '0');
        System.arraycopy(s.getBytes(StandardCharsets.US_ASCII), 0, h, start, s.length());
    }
}
