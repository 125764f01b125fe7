package dev.airlock.docker;

import dev.airlock.BackendUnavailableException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An {@code ssh://} Docker host, as the Docker CLI reaches one: a real OpenSSH server on a free
 * loopback port (generated keys, this user), whose {@code docker system dial-stdio} reaches this
 * machine's daemon. The client side is configured by an ssh config file of the test's own
 * ({@link DockerSettings#SSH_CONFIG}); the user's {@code ~/.ssh} is never read or written.
 */
@ExtendWith(DockerFixture.class)
class DockerSshHostTest {
    private static Path dir;
    private static int port;
    private static Process sshd;

    @BeforeAll
    static void startSshd() throws Exception {
        Services.require(Services.find("sshd").isPresent() && Services.find("ssh").isPresent()
                && Services.find("ssh-keygen").isPresent(), "OpenSSH's ssh, sshd and ssh-keygen are needed for an ssh:// Docker host");
        Services.require(Services.find("docker").isPresent(), "the docker CLI is needed on the ssh host (docker system dial-stdio)");
        Path privsep = Path.of("/run/sshd");
        if ("root".equals(System.getProperty("user.name")) && !Files.isDirectory(privsep)) {
            Files.createDirectories(privsep);
        }
        dir = Files.createTempDirectory("airlock-docker-sshd-", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        keygen(dir.resolve("host_key"));
        keygen(dir.resolve("id_ed25519"));
        keygen(dir.resolve("id_stranger"));
        Files.copy(dir.resolve("id_ed25519.pub"), dir.resolve("authorized_keys"));
        IOException last = null;
        for (int attempt = 0; attempt < 3 && sshd == null; attempt++) {
            port = freePort();
            Files.writeString(dir.resolve("sshd_config"), String.join("\n",
                    "Port " + port, "ListenAddress 127.0.0.1", "HostKey " + dir.resolve("host_key"),
                    "PidFile " + dir.resolve("sshd.pid"), "AuthorizedKeysFile " + dir.resolve("authorized_keys"),
                    "PubkeyAuthentication yes", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
                    "PermitRootLogin prohibit-password", "StrictModes no", "UsePAM no", "PrintMotd no", ""));
            Path log = dir.resolve("sshd.log");
            Process p = new ProcessBuilder(Services.find("sshd").get().toString(), "-D", "-e", "-f", dir.resolve("sshd_config").toString())
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                awaitListening(p, log);
                sshd = p;
            } catch (IOException e) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                last = e;
            }
        }
        if (sshd == null) {
            throw new IllegalStateException("sshd did not start: " + last.getMessage(), last);
        }
        String[] hostPub = Files.readString(dir.resolve("host_key.pub")).trim().split(" ");
        Files.writeString(dir.resolve("known_hosts"), "[127.0.0.1]:" + port + " " + hostPub[0] + " " + hostPub[1] + "\n");
        Files.writeString(dir.resolve("empty_known_hosts"), "");
    }

    @AfterAll
    static void stopSshd() throws Exception {
        if (sshd != null) {
            sshd.destroy();
            if (!sshd.waitFor(10, TimeUnit.SECONDS)) {
                sshd.destroyForcibly();
            }
        }
    }

    /** An ssh config file for this server: the key, its known_hosts, nothing of the user's. */
    private static Path config(String name, String identity, String knownHosts) throws IOException {
        return Files.writeString(dir.resolve(name), String.join("\n",
                "Host *",
                "  IdentityFile " + dir.resolve(identity),
                "  IdentitiesOnly yes",
                "  IdentityAgent none",
                "  UserKnownHostsFile " + dir.resolve(knownHosts),
                "  GlobalKnownHostsFile /dev/null",
                "  StrictHostKeyChecking yes",
                ""));
    }

    private static String url() {
        return "ssh://" + System.getProperty("user.name") + "@127.0.0.1:" + port;
    }

    @Test
    void commandsAndFilesTravelByteExactThroughTheSshHostAndNothingIsLeftRunning() throws Exception {
        byte[] payload = new byte[2 << 20];
        new Random(11).nextBytes(payload);
        payload[0] = 0;
        Path config = config("config", "id_ed25519", "known_hosts");
        try (Environment env = Environments.open(DockerFixture.settings(DockerSettings.HOST, url(),
                DockerSettings.SSH_CONFIG, config.toString()))) {
            ExecResult r = env.exec(ExecRequest.builder("echo hi; echo err >&2; exit 3").build());
            assertEquals(3, r.exitCode(), r.stderr().text());
            assertEquals("hi\n", r.stdout().text());
            assertEquals("err\n", r.stderr().text());
            ExecResult cat = env.exec(ExecRequest.builder("cat").stdin(payload).build());
            assertArrayEquals(payload, cat.stdout().bytes(), "stdin in, stdout out, through dial-stdio's half-close");
            env.files().write("/tmp/over-ssh/data.bin", payload);
            try (InputStream in = env.files().read("/tmp/over-ssh/data.bin")) {
                assertArrayEquals(payload, in.readAllBytes());
            }
            assertFalse(sshClients().isEmpty(), "the master connection runs while the environment is open");
        }
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!sshClients().isEmpty() && System.nanoTime() < end) {
            Thread.sleep(50);
        }
        assertEquals(List.of(), sshClients(), "no ssh of ours outlives the environment");
    }

    @Test
    void aKeyTheHostRefusesIsOneLineWithSshsOwnReason() throws Exception {
        Path config = config("stranger", "id_stranger", "known_hosts");
        BackendUnavailableException e = assertThrows(BackendUnavailableException.class, () -> Environments.open(
                DockerFixture.settings(DockerSettings.HOST, url(), DockerSettings.SSH_CONFIG, config.toString())));
        assertTrue(e.getMessage().startsWith("cannot log in to " + url() + " for its Docker daemon: ssh said: ")
                && e.getMessage().contains("Permission denied") && !e.getMessage().contains("\n"), e.getMessage());
        assertEquals(List.of(), sshClients(), "the failed master is gone");
    }

    @Test
    void anUnknownHostKeyIsRefusedNotAsked() throws Exception {
        Path config = config("unknown", "id_ed25519", "empty_known_hosts");
        BackendUnavailableException e = assertThrows(BackendUnavailableException.class, () -> Environments.open(
                DockerFixture.settings(DockerSettings.HOST, url(), DockerSettings.SSH_CONFIG, config.toString())));
        assertTrue(e.getMessage().contains("Host key verification failed") && !e.getMessage().contains("\n"), e.getMessage());
    }

    /** This JVM's ssh client processes (sshd, also ours, is not one). */
    private static List<Long> sshClients() {
        List<Long> out = new ArrayList<>();
        ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).forEach(h -> {
            String cmd = h.info().command().orElse("");
            if (cmd.endsWith("/ssh") && h.info().arguments().map(a -> String.join(" ", a).contains(dir.toString())).orElse(false)) {
                out.add(h.pid());
            }
        });
        return out;
    }

    private static void keygen(Path file) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "airlock-test", "-f", file.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IOException("ssh-keygen failed: " + out);
        }
    }

    private static void awaitListening(Process p, Path log) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            String text = Files.exists(log) ? Files.readString(log) : "";
            if (text.contains("Server listening on 127.0.0.1 port " + port)) {
                return;
            }
            if (!p.isAlive()) {
                throw new IOException("sshd exited " + p.exitValue() + ": " + text.strip());
            }
            Thread.sleep(20);
        }
        throw new IOException("sshd did not report listening within 20s");
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
