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
     * A bash login whose {@code ~/.bashrc} is slow or has effects (here it counts itself): open and
     * one exec with environment variables are two logins in all (the control shell, which carries
     * the probe, the profile home, the labels, the env file and the private dir's removal; and the
     * channel the command takes, opened beside it), and the command's own bash does not read the
     * user's startup files again. From the second exec on, each exec opens the waiting channel
     * the next one takes: the next command runs in a login that ran before it was sent (its
     * startup files already read), and still one login per exec. Close logs in no more. Before:
     * six logins for open, exec and close (a 3 s {@code ~/.bashrc} made a CLI {@code exec true}
     * take 22 s), and before that three reads of {@code ~/.bashrc} per exec; and each exec after
     * the first paid its login while the caller waited.
     */
    @Test
    void oneLoginPerExecTheNextOnePaidBeforeItComesAndTheCommandsBashDoesNotReadTheStartupFilesAgain(@TempDir Path dir)
            throws Exception {
        Path bash = SshdServer.find("bash");
        Services.require(bash != null, "bash is needed as the login shell");
        Path home = Files.createDirectories(dir.resolve("home"));
        Path logins = dir.resolve("logins");
        Path reads = dir.resolve("bashrc-reads");
        Files.writeString(home.resolve(".bashrc"), "echo read >> '" + reads + "'\n");
        Path shell = dir.resolve("counting-login");
        // Each login logs its pid and hands it down, so a command can tell which login it runs in.
        Files.writeString(shell, "#!/bin/sh\necho $$ >> '" + logins + "'\nLOGIN_PID=$$; export LOGIN_PID\nHOME='" + home
                + "'; export HOME\nexec " + bash + " \"$@\"\n");
        Files.setPosixFilePermissions(shell, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        String privateDir;
        try (SshdServer server = SshdServer.start(shell); Environment env = Environments.open(server.settings())) {
            privateDir = SshBackend.of(env).privateDir();
            ExecResult r = env.exec(ExecRequest.builder("printf '%s' \"$GREETING\"").env(java.util.Map.of("GREETING", "hi there")).build());
            assertEquals("hi there", r.stdout().text(), r.stderr().text());
            assertEquals(2, lines(logins), "logins for open and one exec with environment variables");
            ExecResult second = env.exec(ExecRequest.of("printf %s \"$LOGIN_PID\""));
            assertEquals(0, second.exitCode(), second.stderr().text());
            assertEquals(4, awaitLines(logins, 4), "logins after a second exec: its own, and the waiting one for the next");
            // The two logins of the second exec (its own and the waiting one) log in either order.
            java.util.List<String> around = new java.util.ArrayList<>(Files.readAllLines(logins).subList(2, 4));
            assertTrue(around.remove(second.stdout().text()), "the second exec ran in a login of its own: " + around);
            ExecResult third = env.exec(ExecRequest.builder("read x; echo \"$x $LOGIN_PID\"; exit 3")
                    .stdin("later\n".getBytes(StandardCharsets.UTF_8)).build());
            assertEquals(3, third.exitCode(), third.stderr().text());
            assertEquals("later " + around.get(0) + "\n", third.stdout().text(), "the third exec ran in the login opened before it came");
            assertEquals(5, awaitLines(logins, 5), "logins after a third exec: the next waiting one");
        }
        assertEquals(5, lines(logins), "close logged in again");
        assertEquals(lines(logins), lines(reads), "each login reads ~/.bashrc once; a command's bash read it again");
        assertTrue(Files.notExists(Path.of(privateDir)), "the private dir was left: " + privateDir);
    }

    /**
     * Close while the waiting channel's login is still in the user's startup files lets them
     * finish: cut short, they can leave the user's state half made (a {@code pyenv rehash} killed
     * holding its lock file made every later login on the host wait 60 s for it).
     */
    @Test
    void closeLetsAWaitingLoginFinishTheStartupFiles(@TempDir Path dir) throws Exception {
        Path bash = SshdServer.find("bash");
        Services.require(bash != null, "bash is needed as the login shell");
        Path home = Files.createDirectories(dir.resolve("home"));
        Path started = dir.resolve("started");
        Path finished = dir.resolve("finished");
        Files.writeString(home.resolve(".bashrc"), "echo s >> '" + started + "'\nsleep 1\necho f >> '" + finished + "'\n");
        Path shell = dir.resolve("slow-rc-login");
        Files.writeString(shell, "#!/bin/sh\nHOME='" + home + "'; export HOME\nexec " + bash + " \"$@\"\n");
        Files.setPosixFilePermissions(shell, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        try (SshdServer server = SshdServer.start(shell)) {
            try (Environment env = Environments.open(server.settings())) {
                assertEquals(0, env.exec(ExecRequest.of("true")).exitCode());
                assertEquals(0, env.exec(ExecRequest.of("true")).exitCode()); // opens the next one's login
                assertEquals(4, awaitLines(started, 4), "the control shell, two execs and the waiting login");
            }
            assertEquals(lines(started), lines(finished), "a login's startup files were cut short at close");
        }
    }

    /** The lines of {@code file} once it has {@code n} (or after 30 s, whatever it has then). */
    private static long awaitLines(Path file, long n) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (lines(file) < n && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        Thread.sleep(200); // and no more arrive just after
        return lines(file);
    }

    private static long lines(Path file) throws java.io.IOException {
        return Files.exists(file) ? Files.readAllLines(file).size() : 0;
    }
}
