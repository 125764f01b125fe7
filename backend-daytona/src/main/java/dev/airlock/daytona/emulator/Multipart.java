package dev.airlock.daytona.emulator;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A streaming reader of {@code multipart/form-data}: each part's body is read straight from the
 * request, so a 1 GiB upload never sits in memory. Parts must be consumed in order, as the
 * daemon does (which is why a file part must come after its path part).
 */
final class Multipart {
    private static final Pattern BOUNDARY = Pattern.compile("boundary=(?:\"([^\"]+)\"|([^;\\s]+))");
    private static final Pattern DISPOSITION_PARAM = Pattern.compile(";\\s*([A-Za-z*]+)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** One part: its form name, filename if any, and body (valid until the next part is asked for). */
    record Part(String name, Optional<String> filename, Map<String, String> headers, InputStream body) {
    }

    private final InputStream in;
    /** Read ahead from {@code in}: bytes {@code pos} to {@code lim} are not consumed yet. */
    private final byte[] buf = new byte[64 * 1024];
    private int pos;
    private int lim;
    private final byte[] delimiter;
    private boolean done;
    private PartBody current;

    private Multipart(InputStream in, String boundary) {
        this.delimiter = ("\r\n--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        if (delimiter.length > 200) {
            throw new IllegalArgumentException("a multipart boundary of " + boundary.length() + " characters; at most 70");
        }
        this.in = in;
    }

    static Optional<Multipart> open(Optional<String> contentType, InputStream body) throws IOException {
        if (contentType.isEmpty() || !contentType.get().toLowerCase(Locale.ROOT).startsWith("multipart/")) {
            return Optional.empty();
        }
        Matcher m = BOUNDARY.matcher(contentType.get());
        if (!m.find()) {
            return Optional.empty();
        }
        Multipart mp = new Multipart(body, m.group(1) != null ? m.group(1) : m.group(2));
        mp.skipPreamble();
        return Optional.of(mp);
    }

    private void skipPreamble() throws IOException {
        // The first delimiter has no leading CRLF: pretend it had one.
        buf[0] = '\r';
        buf[1] = '\n';
        lim = 2;
        PartBody preamble = new PartBody();
        preamble.transferTo(java.io.OutputStream.nullOutputStream());
        afterDelimiter();
    }

    private void afterDelimiter() throws IOException {
        int a = readByte();
        int b = readByte();
        if (a == '-' && b == '-') {
            done = true;
            return;
        }
        if (a != '\r' || b != '\n') {
            throw new IOException("malformed multipart body: no line end after a boundary");
        }
    }

    /** The next part, or empty after the last one. */
    Optional<Part> next() throws IOException {
        if (current != null) {
            current.transferTo(java.io.OutputStream.nullOutputStream());
            current = null;
            afterDelimiter();
        }
        if (done) {
            return Optional.empty();
        }
        Map<String, String> headers = new LinkedHashMap<>();
        String line;
        while (!(line = readLine()).isEmpty()) {
            int c = line.indexOf(':');
            if (c > 0) {
                headers.put(line.substring(0, c).trim().toLowerCase(Locale.ROOT), line.substring(c + 1).trim());
            }
        }
        String disposition = headers.getOrDefault("content-disposition", "");
        String name = "";
        Optional<String> filename = Optional.empty();
        Matcher m = DISPOSITION_PARAM.matcher(disposition);
        while (m.find()) {
            String v = m.group(2).replace("\\\"", "\"").replace("\\\\", "\\");
            if (m.group(1).equals("name")) {
                name = v;
            } else if (m.group(1).equals("filename")) {
                filename = Optional.of(new String(v.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8));
            }
        }
        current = new PartBody();
        return Optional.of(new Part(name, filename, headers, current));
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = readByte()) >= 0) {
            if (c == '\n') {
                break;
            }
            if (b.size() > 16 * 1024) {
                throw new IOException("a multipart header line is over 16 KiB");
            }
            b.write(c);
        }
        if (c < 0) {
            throw new IOException("malformed multipart body: it ends inside a part's headers");
        }
        String s = b.toString(StandardCharsets.ISO_8859_1);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
    }

    private int readByte() throws IOException {
        return fill(1) ? buf[pos++] & 0xff : -1;
    }

    /** Makes at least {@code need} unconsumed bytes available; false when the body ends first. */
    private boolean fill(int need) throws IOException {
        if (lim - pos >= need) {
            return true;
        }
        System.arraycopy(buf, pos, buf, 0, lim - pos);
        lim -= pos;
        pos = 0;
        while (lim < need) {
            int n = in.read(buf, lim, buf.length - lim);
            if (n < 0) {
                return false;
            }
            lim += n;
        }
        return true;
    }

    /**
     * A part's bytes up to the next delimiter, passed on in the chunks read (the delimiter is
     * searched for in the read-ahead buffer, not byte by byte from the request).
     */
    private final class PartBody extends InputStream {
        private boolean ended;

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (ended) {
                return -1;
            }
            if (len == 0) {
                return 0;
            }
            if (!fill(delimiter.length)) {
                throw new IOException("malformed multipart body: it ends inside a part");
            }
            int end = pos + Math.min(len, lim - pos);
            for (int i = pos; i < end; i++) {
                if (buf[i] != delimiter[0]) {
                    continue;
                }
                int k = 1;
                while (k < delimiter.length && i + k < lim && buf[i + k] == delimiter[k]) {
                    k++;
                }
                if (k == delimiter.length) { // the delimiter: the part ends before it
                    int n = i - pos;
                    System.arraycopy(buf, pos, b, off, n);
                    pos = i + delimiter.length;
                    ended = true;
                    return n == 0 ? -1 : n;
                }
                if (i + k == lim) { // maybe the delimiter, cut by the buffer's end: decided on the next read
                    int n = i - pos;
                    System.arraycopy(buf, pos, b, off, n);
                    pos = i;
                    return n;
                }
            }
            int n = end - pos;
            System.arraycopy(buf, pos, b, off, n);
            pos = end;
            return n;
        }
    }
}
