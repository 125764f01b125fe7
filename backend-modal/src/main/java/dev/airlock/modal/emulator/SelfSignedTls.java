package dev.airlock.modal.emulator;

import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;

import javax.net.ssl.KeyManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate for the emulator's TLS mode, made when it starts: a fresh key pair and a
 * self-signed certificate for {@code localhost}, {@code 127.0.0.1} and {@code ::1} (by the JDK's
 * own {@code keytool}, so no crypto library is needed), kept in the emulator's state dir; the
 * certificate is also written as PEM for clients to trust.
 */
final class SelfSignedTls {
    final ServerCredentials credentials;
    final Path caFile;

    private SelfSignedTls(ServerCredentials credentials, Path caFile) {
        this.credentials = credentials;
        this.caFile = caFile;
    }

    static SelfSignedTls create(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path store = dir.resolve("emulator-tls.p12");
        Path pem = dir.resolve("emulator-ca.pem");
        Files.deleteIfExists(store);
        byte[] pw = new byte[18];
        new SecureRandom().nextBytes(pw);
        char[] password = HexFormat.of().formatHex(pw).toCharArray();
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        // -storepass:env: the password reaches keytool through a variable, never its argv.
        run(List.of(keytool, "-genkeypair", "-alias", "emulator", "-keyalg", "EC", "-groupname", "secp256r1",
                "-validity", "2", "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1,ip:::1",
                "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass:env", "EMULATOR_STOREPASS"), password);
        run(List.of(keytool, "-exportcert", "-rfc", "-alias", "emulator", "-keystore", store.toString(),
                "-storetype", "PKCS12", "-storepass:env", "EMULATOR_STOREPASS", "-file", pem.toString()), password);
        try (InputStream in = Files.newInputStream(store)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, password);
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, password);
            return new SelfSignedTls(TlsServerCredentials.newBuilder().keyManager(kmf.getKeyManagers()).build(), pem);
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot load the emulator's generated certificate: " + e.getMessage(), e);
        }
    }

    private static void run(List<String> argv, char[] password) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
        pb.environment().put("EMULATOR_STOREPASS", new String(password));
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IOException("keytool could not make the emulator's certificate: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while making the emulator's certificate");
        }
    }
}
