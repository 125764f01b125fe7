package dev.airlock.ssh;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Logging in with a key held only by a real ssh-agent (JSch's agent connector over a unix socket). */
class SshAgentTest {

    /** A real {@code ssh-agent -D} on a socket in {@code dir}, stopped on close. */
    static final class Agent implements AutoCloseable {
        final Path socket;
        private final Process process;
        private final Path addBin;

        Agent(Path dir) throws Exception {
            Path agentBin = SshdServer.find("ssh-agent");
            addBin = SshdServer.find("ssh-add");
            Services.require(agentBin != null && addBin != null, "ssh-agent and ssh-add are needed (apt-get install openssh-client)");
            socket = dir.resolve("agent.sock");
            process = new ProcessBuilder(agentBin.toString(), "-D", "-a", socket.toString())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("agent.log").toFile()).start();
            for (int i = 0; i < 500 && !Files.exists(socket); i++) {
                Thread.sleep(20);
            }
        }

        /** Adds an unencrypted key file to the agent. */
        void add(Path key) throws Exception {
            ProcessBuilder add = new ProcessBuilder(addBin.toString(), key.toString()).redirectErrorStream(true);
            add.environment().put("SSH_AUTH_SOCK", socket.toString());
            Process p = add.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.waitFor(), out);
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aKeyInTheAgentLogsIn() throws Exception {
        try (SshdServer server = SshdServer.start(); Agent agent = new Agent(server.dir)) {
            agent.add(server.ecdsaKey);
            Path sock = agent.socket;
            // The only key file offered is one the server does not know: the agent's key must do it.
            try (Environment env = Environments.open(server.settings(
                    SshSettings.IDENTITY, server.strangerKey.toString(), SshSettings.AGENT, sock.toString()))) {
                assertEquals("agent\n", env.exec(ExecRequest.of("echo agent")).stdout().text());
            }
            // SSH_AUTH_SOCK is what "auto" reads.
            SshSettings s = SshSettings.from(server.settings(SshSettings.AGENT, "auto"), sock.toString());
            assertEquals(sock, s.agentSocket().orElseThrow());
            assertEquals(java.util.Optional.empty(),
                    SshSettings.from(server.settings(SshSettings.AGENT, "no"), sock.toString()).agentSocket());
        }
    }

    /**
     * OpenSSH's everyday setup: {@code ~/.ssh/id_ed25519} is encrypted and the agent holds it. The
     * default key is skipped (no passphrase is set) and the agent logs in; only a key the user
     * named by {@code airlock.ssh.identity} makes a missing passphrase an error.
     */
    @Test
    void anEncryptedDefaultKeyIsSkippedAndTheAgentLogsIn() throws Exception {
        try (SshdServer server = SshdServer.start(); Agent agent = new Agent(server.dir)) {
            Path home = server.dir.resolve("home");
            Files.createDirectories(home.resolve(".ssh"));
            Files.copy(server.encryptedKey, home.resolve(".ssh/id_ed25519"));
            // The agent holds the same key, decrypted (ssh-add would ask for the passphrase).
            Path plain = server.dir.resolve("decrypted");
            Files.copy(server.encryptedKey, plain);
            run(SshdServer.find("ssh-keygen").toString(), "-q", "-p", "-P", SshdServer.PASSPHRASE, "-N", "", "-f", plain.toString());
            agent.add(plain);

            java.util.Map<String, String> m = server.settingsMap();
            m.remove(SshSettings.IDENTITY);
            m.put(SshSettings.AGENT, "auto");
            dev.airlock.settings.Settings settings = dev.airlock.settings.Settings.of(m);
            SshSettings s = SshSettings.from(settings, agent.socket.toString(), home);
            assertEquals(List.of(home.resolve(".ssh/id_ed25519")), s.identities());
            try (Environment env = SshBackend.open(OpenContext.of(settings), s)) {
                assertEquals("agent\n", env.exec(ExecRequest.of("echo agent")).stdout().text());
            }

            // No agent either: the one line says which default key was skipped and why.
            SshSettings noAgent = SshSettings.from(dev.airlock.settings.Settings.of(m), null, home);
            ConfigurationException none = assertThrows(ConfigurationException.class,
                    () -> SshBackend.open(OpenContext.of(settings), noAgent));
            assertTrue(none.getMessage().contains(home.resolve(".ssh/id_ed25519") + " is encrypted"), none.getMessage());
            assertTrue(none.getMessage().contains(SshSettings.PASSPHRASE), none.getMessage());

            // Named by the user: the missing passphrase is an error even with the agent at hand.
            m.put(SshSettings.IDENTITY, server.encryptedKey.toString());
            SshSettings named = SshSettings.from(dev.airlock.settings.Settings.of(m), agent.socket.toString(), home);
            ConfigurationException e = assertThrows(ConfigurationException.class,
                    () -> SshBackend.open(OpenContext.of(dev.airlock.settings.Settings.of(m)), named));
            assertTrue(e.getMessage().contains(server.encryptedKey + " is encrypted"), e.getMessage());
        }
    }

    private static void run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), String.join(" ", cmd) + ": " + out);
    }
}
