package dev.airlock.ssh;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real sshd that logs users in by keyboard-interactive through PAM (password login off), as many
 * servers do: the password comes from {@code airlock.ssh.password}, answered to PAM's
 * {@code Password:} prompt, and never shows in an error.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SshKeyboardInteractiveTest {
    private static final String PASSWORD = "kbd-int s3cret!";
    private SshdServer server;

    @BeforeAll
    void start() throws Exception {
        server = SshdServer.startWithPassword(PASSWORD);
    }

    @AfterAll
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void theServersPasswordPromptIsAnsweredFromTheSetting() {
        // A key the server does not know: only the password can log in.
        try (Environment env = Environments.open(server.settings(SshSettings.IDENTITY, server.strangerKey.toString(),
                SshSettings.PASSWORD, PASSWORD))) {
            assertEquals("ok\n", env.exec(ExecRequest.of("echo ok")).stdout().text());
        }
        assertTrue(server.log().contains("Accepted keyboard-interactive/pam"), server.log());
    }

    @Test
    void withoutThePasswordTheErrorNamesTheSetting() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> Environments.open(server.settings(SshSettings.IDENTITY, server.strangerKey.toString())));
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().contains(SshSettings.PASSWORD), e.getMessage());
    }

    @Test
    void aWrongPasswordIsTriedOnceAndFailsInOneLineThatNeverShowsIt() {
        String wrong = "xyzzy-not-it";
        long failedBefore = failedAttempts();
        ConfigurationException e = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> assertThrows(ConfigurationException.class,
                () -> Environments.open(server.settings(SshSettings.IDENTITY, server.strangerKey.toString(), SshSettings.PASSWORD, wrong))));
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertFalse(e.getMessage().contains(wrong), e.getMessage());
        assertTrue(e.getMessage().contains("the password in " + SshSettings.PASSWORD), e.getMessage());
        // Not one wrong attempt per MaxAuthTries (JSch alone answers until sshd disconnects): the password
        // once, then JSch's next round is cancelled unanswered, which sshd logs as a second failure.
        long failed = failedAttempts() - failedBefore;
        assertTrue(failed >= 1 && failed <= 2, failed + " failed attempts:\n" + server.log());
    }

    private long failedAttempts() {
        return server.log().lines().filter(l -> l.startsWith("Failed keyboard-interactive")).count();
    }

    @Test
    void keysStillComeFirst() {
        try (Environment env = Environments.open(server.settings(SshSettings.PASSWORD, "unused-wrong"))) {
            assertEquals("ok\n", env.exec(ExecRequest.of("echo ok")).stdout().text());
        }
        assertTrue(server.log().contains("Accepted publickey"), server.log());
    }
}
