package dev.airlock.vercel;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.Sample;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Run by {@link VercelLargeFileTest} in a JVM with a 64 MiB heap: a file of {@code args[1]} bytes
 * written with {@code files().write} from a stream (in parts) and from a local file (one streamed
 * upload), hashed on the target, read back with {@code files().read}, and sent as a command's
 * stdin (staged), each compared by SHA-256. Exits 0 and prints "large ok".
 */
public final class LargeFileMain {
    private LargeFileMain() {
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        long size = Long.parseLong(args[1]);
        Settings s = Settings.of("airlock.backend", "vercel", "airlock.vercel.api-url", url,
                "airlock.vercel.token", VercelEmulatorFixture.TOKEN, "airlock.vercel.team-id", VercelEmulatorFixture.TEAM,
                "airlock.vercel.project-id", "prj_large");
        Sample big = Sample.generated("large", size, 1, 64);
        String expected = sha256(big.open());
        try (Environment env = new VercelProvider().open(OpenContext.of(s))) {
            env.files().write("/tmp/large/big.bin", big.payload());
            check("the written file", expected, hashOnTarget(env, "sha256sum < /tmp/large/big.bin", null));
            check("the file read back", expected, sha256(env.files().read("/tmp/large/big.bin")));
            Path local = Files.createTempFile("airlock-vercel-large-", ".bin");
            try {
                try (InputStream in = big.open()) {
                    Files.copy(in, local, StandardCopyOption.REPLACE_EXISTING);
                }
                env.files().write("/tmp/large/file.bin", Payload.ofFile(local), WriteOptions.defaults());
            } finally {
                Files.delete(local);
            }
            check("the file written from a local file", expected, hashOnTarget(env, "sha256sum < /tmp/large/file.bin; rm -f /tmp/large/file.bin", null));
            check("the staged stdin", expected, hashOnTarget(env, "rm -f /tmp/large/big.bin; sha256sum", big));
        }
        System.out.println("large ok");
    }

    private static String hashOnTarget(Environment env, String script, Sample stdin) {
        ExecRequest.Builder b = ExecRequest.builder(script);
        if (stdin != null) {
            b.stdin(stdin.payload());
        }
        ExecResult r = env.exec(b.build());
        if (r.exitCode() != 0) {
            throw new IllegalStateException("`" + script + "` exited " + r.exitCode() + ": " + r.stderr().text());
        }
        return r.stdout().text().strip().split("\\s+")[0];
    }

    private static void check(String what, String expected, String actual) {
        if (!expected.equals(actual)) {
            throw new IllegalStateException(what + " differs: sha256 " + actual + ", expected " + expected);
        }
        System.out.println(what + ": sha256 ok");
    }

    private static String sha256(InputStream in) throws IOException, NoSuchAlgorithmException {
        MessageDigest d = MessageDigest.getInstance("SHA-256");
        byte[] buf = new byte[1 << 16];
        try (in) {
            for (int n; (n = in.read(buf)) >= 0; ) {
                d.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(d.digest());
    }
}
