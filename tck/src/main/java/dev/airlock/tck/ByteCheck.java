package dev.airlock.tck;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Compares bytes as they arrive with a {@link Sample}, keeping only a buffer: SHA-256 of both
 * sides, both lengths, and the first offset where they differ. Usable as an {@link OutputStream}
 * sink for an exec, or fed from any {@link InputStream}.
 */
final class ByteCheck extends OutputStream {
    private final Sample expected;
    private final InputStream source;
    private final MessageDigest expectedDigest = sha256();
    private final MessageDigest actualDigest = sha256();
    private final byte[] buf = new byte[64 * 1024];
    private long received;
    private long firstDifference = -1;
    private int expectedByte = -1;
    private int actualByte = -1;
    private boolean expectedEnded;
    private boolean finished;

    ByteCheck(Sample expected) {
        this.expected = expected;
        this.source = expected.open();
    }

    /** Checks the whole of {@code actual} against {@code expected}; fails with a precise message. */
    static void assertSame(Sample expected, InputStream actual, String route) {
        ByteCheck c = new ByteCheck(expected);
        try (InputStream in = actual) {
            in.transferTo(c);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the " + route + " bytes back failed: " + e.getMessage(), e);
        }
        c.assertMatches(route);
    }

    @Override
    public synchronized void write(int b) {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) {
        actualDigest.update(b, off, len);
        int done = 0;
        while (done < len) {
            int n = readExpected(Math.min(len - done, buf.length));
            if (n <= 0) {
                // More bytes than expected: the first surplus byte is the difference.
                if (firstDifference < 0) {
                    firstDifference = received + done;
                    actualByte = b[off + done] & 0xff;
                }
                break;
            }
            if (firstDifference < 0) {
                for (int i = 0; i < n; i++) {
                    if (buf[i] != b[off + done + i]) {
                        firstDifference = received + done + i;
                        expectedByte = buf[i] & 0xff;
                        actualByte = b[off + done + i] & 0xff;
                        break;
                    }
                }
            }
            done += n;
        }
        received += len;
    }

    private int readExpected(int max) {
        if (expectedEnded) {
            return -1;
        }
        try {
            int n = source.readNBytes(buf, 0, max);
            if (n < max) {
                expectedEnded = true;
            }
            if (n > 0) {
                expectedDigest.update(buf, 0, n);
            }
            return n == 0 ? -1 : n;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Fails unless exactly the expected bytes arrived. */
    synchronized void assertMatches(String route) {
        if (!finished) {
            finished = true;
            while (readExpected(buf.length) > 0) {
                // digest the rest of the expected bytes
            }
        }
        String want = HexFormat.of().formatHex(expectedDigest.digest());
        String got = HexFormat.of().formatHex(actualDigest.digest());
        if (received == expected.size() && firstDifference < 0 && want.equals(got)) {
            return;
        }
        StringBuilder m = new StringBuilder();
        m.append(route).append(" is not byte-exact for '").append(expected.name()).append("': expected ")
                .append(expected.size()).append(" bytes (sha256 ").append(want).append("), got ").append(received)
                .append(" bytes (sha256 ").append(got).append(")");
        if (firstDifference >= 0) {
            m.append("; first difference at byte ").append(firstDifference);
            if (expectedByte >= 0) {
                m.append(String.format(": expected 0x%02x, got 0x%02x", expectedByte, actualByte));
            } else {
                m.append(String.format(": an extra byte 0x%02x", actualByte));
            }
        } else if (received < expected.size()) {
            m.append("; the output stops short at byte ").append(received);
        }
        fail(m.toString());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
    }
}
