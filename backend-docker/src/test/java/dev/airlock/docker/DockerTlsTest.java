package dev.airlock.docker;

import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A {@code tcp://} daemon behind TLS with client certificates, as {@code DOCKER_TLS_VERIFY} and
 * {@code DOCKER_CERT_PATH} describe it to the Docker CLI: the real daemon, reached through
 * {@link TlsDaemonProxy}, with certificates made by openssl.
 */
@ExtendWith(DockerFixture.class)
class DockerTlsTest {
    @TempDir
    static Path dir;
    private static TlsDaemonProxy proxy;
    private static TlsDaemonProxy.Certificates certs;

    @BeforeAll
    static void startProxy() throws Exception {
        if (DockerFixture.whyNoDaemon() != null) {
            return; // each test is skipped (or failed in CI) by the fixture, with the reason
        }
        certs = TlsDaemonProxy.Certificates.make(dir);
        proxy = new TlsDaemonProxy(certs, Path.of("/var/run/docker.sock"));
    }

    @AfterAll
    static void stopProxy() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
    }

    private static Settings tls(Path certPath, String... extra) {
        String[] all = new String[extra.length + 6];
        all[0] = DockerSettings.HOST;
        all[1] = proxy.url();
        all[2] = DockerSettings.TLS_VERIFY;
        all[3] = "true";
        all[4] = DockerSettings.CERT_PATH;
        all[5] = certPath.toString();
        System.arraycopy(extra, 0, all, 6, extra.length);
        return DockerFixture.settings(all);
    }

    /** Stdin ends through TLS's half-close (close_notify), so cat ends; output and files come back byte-exact. */
    @Test
    void commandsStdinAndFilesTravelByteExactOverVerifiedTls() throws Exception {
        byte[] payload = new byte[3 << 20];
        new Random(7).nextBytes(payload);
        payload[0] = 0;
        try (Environment env = Environments.open(tls(certs.client()))) {
            ExecResult cat = env.exec(ExecRequest.builder("cat").stdin(payload).build());
            assertEquals(0, cat.exitCode(), cat.stderr().text());
            assertArrayEquals(payload, cat.stdout().bytes());
            assertEquals(7, env.exec(ExecRequest.builder("echo oops >&2; exit 7").build()).exitCode());
            env.files().write("/tmp/tls/data.bin", payload);
            try (InputStream in = env.files().read("/tmp/tls/data.bin")) {
                assertArrayEquals(payload, in.readAllBytes());
            }
        }
    }

    /** DOCKER_TLS_VERIFY and DOCKER_CERT_PATH, as the CLI reads them, are enough. */
    @Test
    void theDockerCliVariablesTurnTlsOn() {
        DockerSettings s = DockerSettings.from(Settings.of(DockerSettings.HOST, proxy.url()),
                Map.of("DOCKER_TLS_VERIFY", "1", "DOCKER_CERT_PATH", certs.client().toString()));
        assertEquals(certs.client(), s.tls().orElseThrow().certPath());
        try (DockerDaemon daemon = new DockerDaemon(s)) {
            assertFalse(daemon.ping().isBlank());
        }
    }

    /** Without TLS the daemon's TLS listener answers nothing useful: a one-line error in bounded time, never a hang. */
    @Test
    void plainTcpToATlsDaemonIsAOneLineError() {
        BackendUnavailableException e = assertThrows(BackendUnavailableException.class, () -> Environments.open(DockerFixture.settings(
                DockerSettings.HOST, proxy.url(), DockerSettings.TLS_VERIFY, "false", DockerSettings.API_TIMEOUT, "10s")));
        assertTrue(e.getMessage().contains(DockerSettings.TLS_VERIFY + "=true") && !e.getMessage().contains("\n"), e.getMessage());
    }

    /** A client certificate the daemon's CA did not sign is refused by the daemon; one line, nothing left running. */
    @Test
    void aCertificateFromAnotherCaIsRefused(@TempDir Path other) throws Exception {
        TlsDaemonProxy.Certificates stranger = TlsDaemonProxy.Certificates.make(other);
        BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                () -> Environments.open(tls(stranger.client(), DockerSettings.API_TIMEOUT, "10s")));
        assertTrue(e.getMessage().contains(stranger.client().toString()) && !e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void aMissingKeyIsAConfigurationErrorNamingTheFileAndTheSetting(@TempDir Path partial) throws Exception {
        Files.copy(certs.client().resolve("ca.pem"), partial.resolve("ca.pem"));
        Files.copy(certs.client().resolve("cert.pem"), partial.resolve("cert.pem"));
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.open(tls(partial)));
        assertTrue(e.getMessage().contains("key.pem") && e.getMessage().contains(DockerSettings.CERT_PATH)
                && !e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void aFileThatIsNotPemIsAConfigurationError(@TempDir Path broken) throws Exception {
        Files.copy(certs.client().resolve("ca.pem"), broken.resolve("ca.pem"));
        Files.copy(certs.client().resolve("cert.pem"), broken.resolve("cert.pem"));
        Files.writeString(broken.resolve("key.pem"), "not a key\n");
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.open(tls(broken)));
        assertTrue(e.getMessage().contains(broken.toString()) && !e.getMessage().contains("\n"), e.getMessage());
    }
}
