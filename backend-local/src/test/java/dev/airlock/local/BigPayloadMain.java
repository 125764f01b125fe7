package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.settings.Settings;

import dev.airlock.tck.Sample;

import java.io.InputStream;
import java.security.DigestInputStream;
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
            InputStream gen = new DigestInputStream(Sample.generated("payload", size, 7, 0).open(), expected);
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

    private BigPayloadMain() {
    }
}
