package dev.airlock.ssh;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A user whose login shell is not POSIX (fish, tcsh): sshd hands every command text to that shell,
 * so commands, Airlock's own scripts (probe, files, kill) and timeouts must all go through
 * {@code sh -c} explicitly.
 */
class SshLoginShellTest {

    @ParameterizedTest
    @ValueSource(strings = {"fish", "tcsh"})
    void commandsFilesAndTimeoutsWorkUnderANonPosixLoginShell(String name) throws Exception {
        Path shell = SshdServer.find(name);
        Services.require(shell != null, name + " is needed as a non-POSIX login shell (apt-get install " + name + ")");
        try (SshdServer server = SshdServer.start(shell); Environment env = Environments.open(server.settings())) {
            ExecResult r = env.exec(ExecRequest.builder("read x; echo \"$x\" | tr a-z A-Z; printf '%s\\n' \"$SHELL\"; exit 7")
                    .stdin("it's fine!\n".getBytes(StandardCharsets.UTF_8)).build());
            assertEquals(7, r.exitCode(), r.stderr().text());
            assertEquals("IT'S FINE!\n" + shell + "\n", r.stdout().text(), "the login shell is " + name);

            byte[] data = "line one\n\\ 'quoted' $x !\n".getBytes(StandardCharsets.UTF_8);
            String path = server.dir.resolve("written by " + name).toString();
            env.files().write(path, data);
            assertArrayEquals(data, Files.readAllBytes(Path.of(path)));

            Path pidFile = server.dir.resolve(name + ".pid");
            ExecResult t = env.exec(ExecRequest.builder("sleep 300 & echo $! > " + pidFile + "; wait")
                    .timeout(Duration.ofSeconds(2)).build());
            assertEquals(124, t.exitCode());
            assertTrue(SshExecTest.gone(SshExecTest.awaitPid(pidFile)), "the timed-out command's child survived");
        }
    }

    /**
     * A login shell whose startup prints (a ~/.bashrc without an interactive guard): the probe,
     * files, output and a timeout's KILL of a command ignoring TERM all work as on a quiet host.
     */
    @Test
    void aLoginShellThatPrintsAtStartupChangesNothing(@TempDir Path dir) throws Exception {
        Path shell = dir.resolve("noisy-login");
        Files.writeString(shell, "#!/bin/sh\nprintf 'Welcome to this host! (a startup file that prints)\\n'\n"
                + "printf 'no newline at the end' >&2\nexec /bin/sh \"$@\"\n");
        Files.setPosixFilePermissions(shell, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        try (SshdServer server = SshdServer.start(shell); Environment env = Environments.open(server.settings())) {
            ExecResult r = env.exec(ExecRequest.builder("cat; printf 'e\\000' >&2; exit 5").stdin(new byte[] {0, 1, 2}).build());
            assertEquals(5, r.exitCode(), r.stderr().text());
            assertArrayEquals(new byte[] {0, 1, 2}, r.stdout().bytes());
            assertArrayEquals(new byte[] {'e', 0}, r.stderr().bytes(), "the login shell's stderr was taken for the command's");

            byte[] data = {9, 0, 'x', '\n'};
            String path = server.dir.resolve("written on a noisy host").toString();
            env.files().write(path, data);
            try (java.io.InputStream in = env.files().read(path)) {
                assertArrayEquals(data, in.readAllBytes());
            }

            Path pidFile = server.dir.resolve("ignorer.pid");
            ExecResult t = env.exec(ExecRequest.builder("trap '' TERM; sleep 300 & echo $! > " + pidFile + "; wait")
                    .timeout(Duration.ofSeconds(2)).build());
            assertEquals(124, t.exitCode());
            assertTrue(SshExecTest.gone(SshExecTest.awaitPid(pidFile)), "the command that ignored TERM survived its timeout");
        }
    }
    /**
     * A login that takes seconds to start (a {@code ~/.bashrc} running {@code pyenv init} on a busy
     * host): a timeout's kill steps go through the control shell, not a login each, so a tree that
     * ignores TERM gets its KILL at the grace, not logins later. (Through a login per step the KILL
     * came more than 4 s after the result here; through the control shell, under 2 s.)
     */
    @Test
    void aSlowLoginDoesNotDelayATimeoutsKill(@TempDir Path dir) throws Exception {
        Path shell = dir.resolve("slow-login");
        Files.writeString(shell, "#!/bin/sh\nsleep 3\nexec /bin/sh \"$@\"\n");
        Files.setPosixFilePermissions(shell, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        try (SshdServer server = SshdServer.start(shell); Environment env = Environments.open(server.settings())) {
            Path pidFile = server.dir.resolve("slow-ignorer.pid");
            ExecResult t = env.exec(ExecRequest.builder("trap '' TERM; sleep 300 & echo $! > " + pidFile + "; wait")
                    .timeout(Duration.ofSeconds(12)).build()); // staging and the launch are a login each
            assertEquals(124, t.exitCode(), t.stderr().text());
            long pid = SshExecTest.awaitPid(pidFile);
            // The KILL is due a grace (1 s) after the TERM; 4 s leaves room for a loaded host, not for two logins.
            assertTrue(SshExecTest.gone(pid, 200), "the tree that ignored TERM outlived its timeout by over 4 s (pid " + pid + ")");
        }
    }

    /**
     * A bash login whose {@code ~/.bashrc} is slow or has effects (here it counts itself): open,
     * one exec with environment variables and close are two logins in all (the control shell,
     * which carries the probe, the profile home, the labels, the env file and the private dir's
     * removal; and the channel the command takes, opened beside it), a later exec is one more, and
     * the command's own bash does not read the user's startup files again. Before: six logins for
     * open, exec and close (a 3 s {@code ~/.bashrc} made a CLI {@code exec true} take 22 s), and
     * before that three reads of {@code ~/.bashrc} per exec.
     */
    @Test
    void openOneExecAndCloseAreTwoLoginsAndTheCommandsBashDoesNotReadTheStartupFilesAgain(@TempDir Path dir) throws Exception {
        Path bash = SshdServer.find("bash");
        Services.require(bash != null, "bash is needed as the login shell");
        Path home = Files.createDirectories(dir.resolve("home"));
        Path logins = dir.resolve("logins");
        Path reads = dir.resolve("bashrc-reads");
        Files.writeString(home.resolve(".bashrc"), "echo read >> '" + reads + "'\n");
        Path shell = dir.resolve("counting-login");
        Files.writeString(shell, "#!/bin/sh\necho login >> '" + logins + "'\nHOME='" + home + "'; export HOME\nexec "
                + bash + " \"$@\"\n");
        Files.setPosixFilePermissions(shell, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        String privateDir;
        try (SshdServer server = SshdServer.start(shell); Environment env = Environments.open(server.settings())) {
            privateDir = SshBackend.of(env).privateDir();
            ExecResult r = env.exec(ExecRequest.builder("printf '%s' \"$GREETING\"").env(java.util.Map.of("GREETING", "hi there")).build());
            assertEquals("hi there", r.stdout().text(), r.stderr().text());
            assertEquals(2, lines(logins), "logins for open and one exec with environment variables");
            ExecResult again = env.exec(ExecRequest.builder("read x; echo \"$x\"; exit 3").stdin("later\n".getBytes(StandardCharsets.UTF_8)).build());
            assertEquals(3, again.exitCode(), again.stderr().text());
            assertEquals("later\n", again.stdout().text());
            assertEquals(3, lines(logins), "logins after a second exec");
        }
        assertEquals(3, lines(logins), "close logged in again");
        assertEquals(lines(logins), lines(reads), "each login reads ~/.bashrc once; a command's bash read it again");
        assertTrue(Files.notExists(Path.of(privateDir)), "the private dir was left: " + privateDir);
    }

    private static long lines(Path file) throws java.io.IOException {
        return Files.exists(file) ? Files.readAllLines(file).size() : 0;
    }
}
