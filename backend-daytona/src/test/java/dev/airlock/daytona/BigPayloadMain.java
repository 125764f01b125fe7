package dev.airlock.daytona;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.Sample;

import java.io.InputStream;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * Run in a JVM with a 64 MiB heap by {@link DaytonaBoundedMemoryTest}, against an emulator in
 * another JVM: {@code SIZE} bytes of stdin through {@code sha256sum} (staged by upload), then a
 * file of {@code SIZE} bytes written and read back. Prints one line per check and exits non-zero
 * on a mismatch; an OutOfMemoryError means a payload was held in heap.
 */
public final class BigPayloadMain {
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String key = System.getenv("DAYTONA_API_KEY"); // from the environment, never argv
        long size = Long.parseLong(args[1]);
        Settings s = Settings.of(DaytonaSettings.API_URL, url, DaytonaSettings.API_KEY, key);
        try (Environment env = new DaytonaProvider().open(OpenContext.of(s))) {
            MessageDigest expected = MessageDigest.getInstance("SHA-256");
            InputStream gen = new DigestInputStream(Sample.generated("payload", size, 7, 0).open(), expected);
            ExecResult r = env.exec(ExecRequest.builder("sha256sum").stdin(Payload.ofStream(gen, size)).build());
            String got = r.stdout().text().split(" ")[0];
            String want = HexFormat.of().formatHex(expected.digest());
            boolean stdinOk = got.equals(want);
            System.out.println("sha256 " + (stdinOk ? "ok" : "MISMATCH got " + got + " want " + want));

            MessageDigest written = MessageDigest.getInstance("SHA-256");
            env.files().write("/tmp/big.bin", Payload.ofStream(
                    new DigestInputStream(Sample.generated("file", size, 11, 0).open(), written), size));
            MessageDigest read = MessageDigest.getInstance("SHA-256");
            long n = 0;
            try (InputStream in = env.files().read("/tmp/big.bin")) {
                byte[] buf = new byte[64 * 1024];
                int k;
                while ((k = in.read(buf)) > 0) {
                    read.update(buf, 0, k);
                    n += k;
                }
            }
            boolean fileOk = n == size && MessageDigest.isEqual(written.digest(), read.digest());
            System.out.println("file " + (fileOk ? "ok" : "MISMATCH (" + n + " bytes read)"));
            System.exit(stdinOk && fileOk ? 0 : 1);
        }
    }

    private BigPayloadMain() {
    }
}
