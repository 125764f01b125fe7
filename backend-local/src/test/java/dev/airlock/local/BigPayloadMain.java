package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.settings.Settings;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Run in a JVM with a small heap by {@link BoundedMemoryTest}: 1 GiB through {@code sha256sum},
 * then 16 concurrent execs each printing 8 MiB. Prints one line per check; exits non-zero on a
 * mismatch. An OutOfMemoryError means memory was not bounded by a chunk.
 */
public final class BigPayloadMain {
    public static void main(String[] args) throws Exception {
        long size = Long.parseLong(args[0]);
        try (Environment env = Environments.open(Settings.of("airlock.container", "no"))) {
            MessageDigest expected = MessageDigest.getInstance("SHA-256");
            InputStream gen = new Generated(size, 7, expected);
            ExecResult r = env.exec(ExecRequest.builder("sha256sum").stdin(Payload.ofStream(gen, size)).build());
            String got = r.stdout().text().split(" ")[0];
            String want = HexFormat.of().formatHex(expected.digest());
            System.out.println("sha256 " + (got.equals(want) ? "ok" : "MISMATCH got " + got + " want " + want));

            List<Execution> runs = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                runs.add(env.start(ExecRequest.of("head -c 8388608 /dev/zero | tr '\\0' '" + (char) ('a' + i) + "'")));
            }
            boolean allOk = true;
            for (int i = 0; i < 16; i++) {
                ExecResult each = runs.get(i).await();
                MessageDigest d = MessageDigest.getInstance("SHA-256");
                byte[] buf = new byte[65536];
                long n = 0;
                boolean same = true;
                try (InputStream in = each.stdout().open()) {
                    int k;
                    while ((k = in.read(buf)) > 0) {
                        for (int j = 0; j < k; j++) {
                            same &= buf[j] == 'a' + i;
                        }
                        n += k;
                        d.update(buf, 0, k);
                    }
                }
                allOk &= same && n == 8388608 && each.exitCode() == 0;
            }
            System.out.println("concurrent " + (allOk ? "ok" : "MISMATCH"));
            System.exit(got.equals(want) && allOk ? 0 : 1);
        }
    }

    /** A deterministic byte stream of a given length, digested as it is read. */
    static final class Generated extends InputStream {
        private final MessageDigest digest;
        private long remaining;
        private long state;

        Generated(long size, long seed, MessageDigest digest) {
            this.remaining = size;
            this.state = seed;
            this.digest = digest;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (remaining == 0) {
                return -1;
            }
            int n = (int) Math.min(len, remaining);
            for (int i = 0; i < n; i++) {
                state = state * 6364136223846793005L + 1442695040888963407L;
                b[off + i] = (byte) (state >>> 56);
            }
            digest.update(b, off, n);
            remaining -= n;
            return n;
        }
    }

    private BigPayloadMain() {
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
