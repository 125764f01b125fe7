package dev.airlock.emulator;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Pushes one large payload through an environment the way a user's code moves it, and says
 * which legs kept the bytes: {@code files().write} of a streamed payload, {@code files().read}
 * read to the end, and an exec's stdout ({@code cat} of the file) into a sink. Each leg is compared
 * by SHA-256 and length with the bytes that were sent. The payload is pseudo-random (it does not
 * compress, so a gzip leg carries all of it) and generated as it is read, so the checking side
 * holds a buffer, not the payload.
 */
public final class TransferCheck {
    private TransferCheck() {
    }

    /** Which legs went wrong, each as one line (none: empty): a mismatch, a short read or the failure's message. */
    public static List<String> run(Environment env, String path, long size) {
        List<String> problems = new ArrayList<>();
        String want = sha256(pseudoRandom(size, 35));
        try {
            env.files().write(path, Payload.ofStream(pseudoRandom(size, 35), size));
        } catch (RuntimeException e) {
            problems.add("write: " + e);
            return problems;
        }
        try (InputStream in = env.files().read(path)) {
            DigestSink got = new DigestSink();
            in.transferTo(got);
            check(problems, "read", got, size, want);
        } catch (IOException | RuntimeException e) {
            problems.add("read: " + e);
        }
        try {
            DigestSink got = new DigestSink();
            ExecResult r = env.exec(ExecRequest.builder("cat '" + path + "'").output(got, OutputStream.nullOutputStream()).build());
            if (r.exitCode() != 0) {
                problems.add("exec stdout: cat exited " + r.exitCode());
            }
            check(problems, "exec stdout", got, size, want);
        } catch (RuntimeException e) {
            problems.add("exec stdout: " + e);
        }
        return problems;
    }

    private static void check(List<String> problems, String leg, DigestSink got, long size, String want) {
        String hex = HexFormat.of().formatHex(got.digest.digest());
        if (got.count != size || !hex.equals(want)) {
            problems.add(leg + ": " + got.count + " bytes with sha256 " + hex + ", expected " + size + " bytes with " + want);
        }
    }

    /** {@code size} pseudo-random bytes, the same for the same {@code seed}, made as they are read. */
    public static InputStream pseudoRandom(long size, long seed) {
        return new Generated(size, seed);
    }

    /** The SHA-256 of the rest of {@code in} (which is closed), in hex. */
    public static String sha256(InputStream in) {
        try (in) {
            DigestSink d = new DigestSink();
            in.transferTo(d);
            return HexFormat.of().formatHex(d.digest.digest());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Counts and digests what is written to it. */
    private static final class DigestSink extends OutputStream {
        final MessageDigest digest = newSha256();
        long count;

        @Override
        public void write(int b) {
            digest.update((byte) b);
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            digest.update(b, off, len);
            count += len;
        }
    }

    /** {@code size} pseudo-random bytes (xorshift64 from {@code seed}), the same for the same seed. */
    private static final class Generated extends InputStream {
        private long left;
        private long state;
        private long word;
        private int inWord;

        Generated(long size, long seed) {
            this.left = size;
            this.state = seed * 0x9E3779B97F4A7C15L | 1;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (left == 0) {
                return -1;
            }
            int n = (int) Math.min(len, left);
            for (int i = 0; i < n; i++) {
                if (inWord == 0) {
                    state ^= state << 13;
                    state ^= state >>> 7;
                    state ^= state << 17;
                    word = state;
                    inWord = 8;
                }
                b[off + i] = (byte) word;
                word >>>= 8;
                inWord--;
            }
            left -= n;
            return n;
        }
    }
}
