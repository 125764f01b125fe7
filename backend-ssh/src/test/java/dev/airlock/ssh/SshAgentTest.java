package dev.airlock.ssh;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Logging in with a key held only by a real ssh-agent (JSch's agent connector over a unix socket). */
class SshAgentTest {

    @Test
    void aKeyInTheAgentLogsIn() throws Exception {
        Path agentBin = SshdServer.find("ssh-agent");
        Path addBin = SshdServer.find("ssh-add");
        Services.require(agentBin != null && addBin != null, "ssh-agent and ssh-add are needed (apt-get install openssh-client)");
        try (SshdServer server = SshdServer.start()) {
            Path sock = server.dir.resolve("agent.sock");
            Process agent = new ProcessBuilder(agentBin.toString(), "-D", "-a", sock.toString())
                    .redirectErrorStream(true).redirectOutput(server.dir.resolve("agent.log").toFile()).start();
            try {
                for (int i = 0; i < 500 && !Files.exists(sock); i++) {
                    Thread.sleep(20);
                }
                ProcessBuilder add = new ProcessBuilder(addBin.toString(), server.ecdsaKey.toString()).redirectErrorStream(true);
                add.environment().put("SSH_AUTH_SOCK", sock.toString());
                Process p = add.start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertEquals(0, p.waitFor(), out);
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
            } finally {
                agent.destroy();
                agent.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
