package dev.airlock.vercel;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Writes the one-entry tars {@code fs/write} takes: a ustar header with the exact size and mode
 * (a pax record carries names over 100 bytes and sizes over 8 GiB), the bytes, the padding and
 * the end-of-archive blocks. Nothing is buffered beyond a header.
 */
final class Tar {
    private Tar() {
    }

    static void header(OutputStream out, String name, int mode, long size) throws IOException {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        boolean pax = utf8.length > 100 || size > 077777777777L;
        if (pax) {
            StringBuilder records = new StringBuilder();
            records.append(record("path", name));
            records.append(record("size", Long.toString(size)));
            byte[] body = records.toString().getBytes(StandardCharsets.UTF_8);
            out.write(block("PaxHeader", 0644, body.length, 'x'));
            out.write(body);
            out.write(new byte[pad(body.length)]);
        }
        out.write(block(pax ? "airlock-long-name" : name, mode, pax ? 0 : size, '0'));
    }

    /** Pads the entry of {@code size} bytes and ends the archive. */
    static void finish(OutputStream out, long size) throws IOException {
        out.write(new byte[pad(size)]);
        out.write(new byte[1024]);
    }

    private static int pad(long size) {
        return (int) ((512 - size % 512) % 512);
    }

    private static String record(String key, String value) {
        String body = " " + key + "=" + value + "\n";
        int len = body.getBytes(StandardCharsets.UTF_8).length;
        int total = len + String.valueOf(len).length();
        if (String.valueOf(total).length() != String.valueOf(len).length()) {
            total++;
        }
        return total + body;
    }

    private static byte[] block(String name, int mode, long size, char type) {
        byte[] h = new byte[512];
        put(h, 0, 100, name.getBytes(StandardCharsets.UTF_8));
        octal(h, 100, 8, mode & 07777);
        octal(h, 108, 8, 0);
        octal(h, 116, 8, 0);
        octal(h, 124, 12, size);
        octal(h, 136, 12, System.currentTimeMillis() / 1000);
        h[156] = (byte) type;
        put(h, 257, 6, "ustar\0".getBytes(StandardCharsets.US_ASCII));
        put(h, 263, 2, "00".getBytes(StandardCharsets.US_ASCII));
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        octal(h, 148, 7, sum);
        return h;
    }

    private static void put(byte[] h, int off, int len, byte[] v) {
        System.arraycopy(v, 0, h, off, Math.min(len, v.length));
    }

    private static void octal(byte[] h, int off, int len, long v) {
        String s = Long.toOctalString(v);
        while (s.length() < len - 1) {
            s = "0" + s;
        }
        put(h, off, len - 1, s.getBytes(StandardCharsets.US_ASCII));
    }
}
