package dev.airlock.ssh;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A host user whose {@code ~/.bashrc} is slow (every exec's login shell waits for it): a timed-out
 * command is still ended and the environment's private dir is still removed at close.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SshSlowStartupTest {
    private PasswordLoginHost host;
    private SshdServer server;
    private TestUser user;

    @BeforeAll
    void start() throws Exception {
        host = PasswordLoginHost.start();
        user = host.user;
        server = host.server;
    }

    @AfterAll
    void stop() throws Exception {
        if (host != null) {
            host.close();
        }
    }

    /**
     * The timeout comes while the command's login shell still reads ~/.bashrc, before the launcher
     * record: the kill is the channel's own signal. A second signal sent on the channel after the
     * server closed it made sshd drop the whole connection ("unknown channel"), taking every other
     * command on it and, at close, the private dir's removal with it.
     */
    @Test
    void aTimeoutDuringTheStartupFilesEndsOnlyThatCommandAndCloseRemovesThePrivateDir(@TempDir Path emptyHome) throws Exception {
        user.write(".bashrc", "sleep 5\n");
        Settings s = Settings.of(user.settingsMap(server));
        String privateDir;
        try (Environment env = SshBackend.open(OpenContext.of(s), SshSettings.from(s, null, emptyHome))) {
            privateDir = SshBackend.of(env).privateDir();
            assertNotNull(privateDir);
            assertTrue(Files.isDirectory(Path.of(privateDir)), privateDir);
            CompletableFuture<ExecResult> neighbour = CompletableFuture.supplyAsync(
                    () -> env.exec(ExecRequest.of("sleep 3; echo survived")));
            ExecResult r = env.exec(ExecRequest.builder("sleep 60").timeout(Duration.ofSeconds(2)).build());
            assertEquals(124, r.exitCode(), r.stderr().text());
            ExecResult n = neighbour.get(60, TimeUnit.SECONDS);
            assertEquals("survived\n", n.stdout().text(), "the other command on the connection: " + n.stderr().text());
        }
        assertFalse(server.log().contains("unknown channel"), server.log());
        assertFalse(Files.exists(Path.of(privateDir)), "the private dir " + privateDir + " was left on the host");
    }
}
