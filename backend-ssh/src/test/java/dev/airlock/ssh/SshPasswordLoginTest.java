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
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Password-only login against a real sshd with PAM, as a throwaway user with a real password: no
 * key file, an empty HOME (no default keys) and no ssh-agent, so {@code airlock.ssh.password} is
 * all there is.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SshPasswordLoginTest {
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

    private Environment open(Map<String, String> m, Path home) {
        Settings s = Settings.of(m);
        return SshBackend.open(OpenContext.of(s), SshSettings.from(s, null, home));
    }

    @Test
    void thePasswordAloneLogsIn(@TempDir Path emptyHome) {
        String logged = logOf(() -> {
            try (Environment env = open(user.settingsMap(server), emptyHome)) {
                assertEquals(user.name + "\n", env.exec(ExecRequest.of("id -un")).stdout().text());
            }
        });
        assertTrue(server.log().contains("Accepted keyboard-interactive/pam for " + user.name)
                || server.log().contains("Accepted password for " + user.name), server.log());
        assertTrue(logged.contains("logged in to " + user.name), "the debug log was captured: " + logged);
        assertFalse(logged.contains(user.password), "the password reached the log");
    }

    /** What the (debug-level) log printed while {@code body} ran: slf4j-simple writes to System.err. */
    private static String logOf(Runnable body) {
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            body.run();
        } finally {
            System.setErr(err);
        }
        String text = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
        err.print(text);
        return text;
    }

    @Test
    void aWrongPasswordFailsInOneLineThatNeverShowsIt(@TempDir Path emptyHome) {
        Map<String, String> m = user.settingsMap(server);
        String wrong = user.password + "-wrong";
        m.put(SshSettings.PASSWORD, wrong);
        ConfigurationException[] thrown = new ConfigurationException[1];
        String logged = logOf(() -> thrown[0] = assertThrows(ConfigurationException.class, () -> open(m, emptyHome)));
        assertFalse(logged.contains(wrong), "the password reached the log");
        String message = thrown[0].getMessage();
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
