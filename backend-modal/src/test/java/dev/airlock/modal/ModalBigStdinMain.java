package dev.airlock.modal;

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
 * Run in a JVM with a 64 MiB heap by {@link ModalBoundedMemoryTest}: {@code args[1]} bytes of stdin
 * through {@code sha256sum} on the Modal emulator at {@code args[0]} (tokens from MODAL_TOKEN_ID
 * and MODAL_TOKEN_SECRET, never argv). Prints {@code sha256 ok}; an OutOfMemoryError means the
 * streamed stdin was not bounded by its chunk.
 */
public final class ModalBigStdinMain {
    public static void main(String[] args) throws Exception {
        long size = Long.parseLong(args[1]);
        Settings s = Settings.fromProcess().with(ModalSettings.SERVER_URL, args[0]);
        try (Environment env = new ModalProvider().open(OpenContext.of(s))) {
            MessageDigest expected = MessageDigest.getInstance("SHA-256");
            InputStream gen = new DigestInputStream(Sample.generated("payload", size, 11, 0).open(), expected);
            ExecResult r = env.exec(ExecRequest.builder("sha256sum").stdin(Payload.ofStream(gen, size)).build());
            String got = r.stdout().text().split(" ")[0];
            String want = HexFormat.of().formatHex(expected.digest());
            System.out.println("sha256 " + (got.equals(want) ? "ok" : "MISMATCH got " + got + " want " + want
                    + " exit " + r.exitCode() + " " + r.stderr().text()));
            System.exit(got.equals(want) ? 0 : 1);
        }
    }

    private ModalBigStdinMain() {
    }
}
