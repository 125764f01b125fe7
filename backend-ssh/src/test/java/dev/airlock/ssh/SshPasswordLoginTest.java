package dev.airlock.ssh;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Password-only login against a real sshd with PAM, as a throwaway user with a real password: no
 * key file, an empty HOME (no default keys) and no ssh-agent, so {@code airlock.ssh.password} is
 * all there is.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SshPasswordLoginTest {
    private SshdServer server;
    private TestUser user;

    @BeforeAll
    void start() throws Exception {
        user = TestUser.create();
        server = SshdServer.startForPasswordLogin();
    }

    @AfterAll
    void stop() throws Exception {
        try {
            if (server != null) {
                server.close();
            }
        } finally {
            if (user != null) {
                user.close();
            }
        }
    }

    private Environment open(Map<String, String> m, Path home) {
        Settings s = Settings.of(m);
        return SshEnvironment.open(OpenContext.of(s), SshSettings.from(s, null, home));
    }

    @Test
    void thePasswordAloneLogsIn(@TempDir Path emptyHome) {
        try (Environment env = open(user.settingsMap(server), emptyHome)) {
            assertEquals(user.name + "\n", env.exec(ExecRequest.of("id -un")).stdout().text());
        }
        assertTrue(server.log().contains("Accepted keyboard-interactive/pam for " + user.name)
                || server.log().contains("Accepted password for " + user.name), server.log());
    }

    @Test
    void aWrongPasswordFailsInOneLineThatNeverShowsIt(@TempDir Path emptyHome) {
        Map<String, String> m = user.settingsMap(server);
        String wrong = user.password + "-wrong";
        m.put(SshSettings.PASSWORD, wrong);
        ConfigurationException e = assertTimeoutPreemptively(Duration.ofSeconds(60),
                () -> assertThrows(ConfigurationException.class, () -> open(m, emptyHome)));
        String message = e.getMessage();
        assertFalse(message.contains("\n"), message);
        assertFalse(message.contains(wrong) || message.contains(user.password), message);
        assertTrue(message.contains(SshSettings.PASSWORD) && message.contains(user.name), message);
    }

    @Test
    void withNeitherKeyNorPasswordTheErrorSaysHowToLogIn(@TempDir Path emptyHome) {
        Map<String, String> m = user.settingsMap(server);
        m.remove(SshSettings.PASSWORD);
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> open(m, emptyHome));
        assertTrue(e.getMessage().startsWith("no SSH key to log in to " + user.name + "@127.0.0.1"), e.getMessage());
        assertTrue(e.getMessage().contains(SshSettings.PASSWORD), e.getMessage());
    }
}
