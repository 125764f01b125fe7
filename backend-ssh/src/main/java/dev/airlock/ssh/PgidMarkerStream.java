package dev.airlock.ssh;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A command's stderr with the launcher's marker line ({@code MARKER digits \n}, written before the
 * command starts) taken out and its number kept as the process group id. The marker carries a
 * random per-environment nonce, so no command output can forge it. Bytes before it (a noisy
 * {@code .bashrc}) pass through unchanged; if it has not appeared within {@link #SCAN_LIMIT} bytes
 * the stream stops looking and passes everything through.
 */
final class PgidMarkerStream extends InputStream {
    static final int SCAN_LIMIT = 64 * 1024;

    private final InputStream in;
    private final byte[] marker;
    private final CountDownLatch settled = new CountDownLatch(1);
    private final ByteArrayOutputStream ready = new ByteArrayOutputStream();
    private final byte[] one = new byte[1];
    private byte[] readyBytes = new byte[0];
    private int readyPos;
    private boolean scanning = true;
    private int matched; // bytes of the marker matched so far
    private final StringBuilder digits = new StringBuilder();
    private long scanned;
    private volatile long pgid = -1;

    PgidMarkerStream(InputStream in, String marker) {
        this.in = in;
        this.marker = marker.getBytes(StandardCharsets.US_ASCII);
    }

    /** Waits up to {@code millis} for the marker; empty when it never came (the stream ended or gave up). */
    OptionalLong pgid(long millis) throws InterruptedException {
        settled.await(millis, TimeUnit.MILLISECONDS);
        long p = pgid;
        return p > 0 ? OptionalLong.of(p) : OptionalLong.empty();
    }

    @Override
    public int read() throws IOException {
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        while (scanning && readyPos >= readyBytes.length) {
            scanSome();
        }
        if (readyPos < readyBytes.length) {
            int n = Math.min(len, readyBytes.length - readyPos);
            System.arraycopy(readyBytes, readyPos, b, off, n);
            readyPos += n;
            return n;
        }
        return in.read(b, off, len);
    }

    /** Reads one chunk while still looking for the marker; fills the ready buffer with what passes through. */
    private void scanSome() throws IOException {
        byte[] buf = new byte[8192];
        int n = in.read(buf, 0, buf.length);
        if (n < 0) {
            flushPartial();
            settle();
            publish();
            return;
        }
        for (int i = 0; i < n; i++) {
            byte c = buf[i];
            if (!scanning) {
                ready.write(c);
                continue;
            }
            if (matched < marker.length) {
                if (c == marker[matched]) {
                    matched++;
                } else {
                    flushPartial();
                    if (c == marker[0]) {
                        matched = 1; // the marker's first byte occurs nowhere else in it
                    } else {
                        ready.write(c);
                    }
                }
            } else if (c >= '0' && c <= '9' && digits.length() < 18) {
                digits.append((char) c);
            } else if (c == '\n' && digits.length() > 0) {
                pgid = Long.parseLong(digits.toString());
                matched = 0;
                digits.setLength(0);
                settle();
            } else {
                flushPartial();
                ready.write(c);
            }
            if (scanning && (scanned += 1) > SCAN_LIMIT) {
                flushPartial();
                settle();
            }
        }
        publish();
    }

    private void flushPartial() {
        ready.write(marker, 0, matched);
        byte[] d = digits.toString().getBytes(StandardCharsets.US_ASCII);
        ready.write(d, 0, d.length);
        matched = 0;
        digits.setLength(0);
    }

    private void settle() {
        scanning = false;
        settled.countDown();
    }

    /** Called only when everything published before was consumed. */
    private void publish() {
        readyBytes = ready.toByteArray();
        ready.reset();
        readyPos = 0;
    }

    @Override
    public int available() throws IOException {
        return (readyBytes.length - readyPos) + (scanning ? 0 : in.available());
    }

    @Override
    public void close() throws IOException {
        settle();
        in.close();
    }
}
