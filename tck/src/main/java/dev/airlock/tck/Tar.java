package dev.airlock.tck;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The smallest tar the kit needs to test {@code copyIn}/{@code copyOut} on any backend: a ustar
 * writer and a reader that also understands GNU long names and pax paths (what GNU and busybox
 * tar emit). Entries are small and held in memory.
 */
final class Tar {
    private static final int BLOCK = 512;

    private Tar() {
    }

    /** One tar entry: a regular file, a directory or a symlink. */
    record Entry(String path, char type, int mode, byte[] content, String linkTarget) {
        static Entry file(String path, int mode, byte[] content) {
            return new Entry(path, '0', mode, content.clone(), "");
        }

        static Entry dir(String path, int mode) {
            return new Entry(path, '5', mode, new byte[0], "");
        }

        boolean isDirectory() {
            return type == '5';
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Entry e && e.path.equals(path) && e.type == type && e.mode == mode
                    && Arrays.equals(e.content, content) && e.linkTarget.equals(linkTarget);
        }

        @Override
        public int hashCode() {
            return path.hashCode() * 31 + Arrays.hashCode(content);
        }

        @Override
        public String toString() {
            return path + " " + type + " " + Integer.toOctalString(mode) + " " + content.length + " bytes";
        }
    }

    /** A ustar archive of these entries (paths up to 100 bytes). */
    static byte[] write(List<Entry> entries) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Entry e : entries) {
            byte[] h = new byte[BLOCK];
            byte[] name = (e.isDirectory() && !e.path.endsWith("/") ? e.path + "/" : e.path).getBytes(StandardCharsets.UTF_8);
            if (name.length > 100) {
                throw new IllegalArgumentException("the kit's tar writer takes paths up to 100 bytes: " + e.path);
            }
            System.arraycopy(name, 0, h, 0, name.length);
            octal(h, 100, 8, e.mode);
            octal(h, 108, 8, 0);
            octal(h, 116, 8, 0);
            octal(h, 124, 12, e.content.length);
            octal(h, 136, 12, 1_700_000_000L);
            Arrays.fill(h, 148, 156, (byte) ' ');
            h[156] = (byte) e.type;
            byte[] link = e.linkTarget.getBytes(StandardCharsets.UTF_8);
            System.arraycopy(link, 0, h, 157, link.length);
            System.arraycopy("ustar\u000000".getBytes(StandardCharsets.US_ASCII), 0, h, 257, 8);
            long sum = 0;
            for (byte b : h) {
                sum += b & 0xff;
            }
            byte[] ck = String.format("%06o", sum).getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(ck, 0, h, 148, 6);
            h[154] = 0;
            h[155] = ' ';
            out.writeBytes(h);
            out.writeBytes(e.content);
            out.writeBytes(new byte[pad(e.content.length)]);
        }
        out.writeBytes(new byte[2 * BLOCK]);
        return out.toByteArray();
    }

    /** The entries of an archive, paths without a leading {@code ./} and directories without a trailing {@code /}. */
    static List<Entry> read(InputStream in) throws IOException {
        List<Entry> out = new ArrayList<>();
        String longName = null;
        while (true) {
            byte[] h = in.readNBytes(BLOCK);
            if (h.length < BLOCK || isZero(h)) {
                return out;
            }
            char type = h[156] == 0 ? '0' : (char) h[156];
            long size = parseOctal(h, 124, 12);
            byte[] body = in.readNBytes((int) size);
            if (body.length != size) {
                throw new IOException("the tar stream ends inside an entry");
            }
            in.readNBytes(pad(size));
            String name = text(h, 0, 100);
            if (h[257] == 'u' && h[262] == 0) {
                String prefix = text(h, 345, 155); // ustar (not GNU) prefix field
                if (!prefix.isEmpty()) {
                    name = prefix + "/" + name;
                }
            }
            switch (type) {
                case 'L' -> {
                    longName = new String(body, StandardCharsets.UTF_8).replaceAll("\u0000+$", "");
                    continue;
                }
                case 'x' -> {
                    longName = paxPath(body, longName);
                    continue;
                }
                case 'g' -> {
                    continue;
                }
                default -> {
                }
            }
            if (longName != null) {
                name = longName;
                longName = null;
            }
            out.add(new Entry(normalize(name), type == '7' ? '0' : type, (int) parseOctal(h, 100, 8) & 07777, body,
                    text(h, 157, 100)));
        }
    }

    private static String paxPath(byte[] body, String current) {
        // Records are "LEN key=value\n"; only the path matters here.
        String s = new String(body, StandardCharsets.UTF_8);
        int i = 0;
        String path = current;
        while (i < s.length()) {
            int sp = s.indexOf(' ', i);
            if (sp < 0) {
                break;
            }
            int len = Integer.parseInt(s.substring(i, sp));
            String rec = new String(Arrays.copyOfRange(body, i, i + len), StandardCharsets.UTF_8);
            String kv = rec.substring(rec.indexOf(' ') + 1, rec.length() - 1);
            if (kv.startsWith("path=")) {
                path = kv.substring(5);
            }
            i += len;
        }
        return path;
    }

    private static String normalize(String name) {
        String n = name;
        while (n.startsWith("./")) {
            n = n.substring(2);
        }
        while (n.endsWith("/") && n.length() > 1) {
            n = n.substring(0, n.length() - 1);
        }
        return n;
    }

    private static int pad(long size) {
        return (int) ((BLOCK - size % BLOCK) % BLOCK);
    }

    private static boolean isZero(byte[] h) {
        for (byte b : h) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    private static void octal(byte[] h, int off, int len, long value) {
        byte[] s = String.format("%0" + (len - 1) + "o", value).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(s, 0, h, off, s.length);
        h[off + len - 1] = 0;
    }

    private static long parseOctal(byte[] h, int off, int len) throws IOException {
        if ((h[off] & 0x80) != 0) {
            throw new IOException("base-256 tar numbers are beyond the kit's reader");
        }
        String s = text(h, off, len).trim();
        return s.isEmpty() ? 0 : Long.parseLong(s, 8);
    }

    private static String text(byte[] h, int off, int len) {
        int end = off;
        while (end < off + len && h[end] != 0) {
            end++;
        }
        return new String(h, off, end - off, StandardCharsets.UTF_8);
    }
}
