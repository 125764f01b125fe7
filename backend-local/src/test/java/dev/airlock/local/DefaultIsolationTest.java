package dev.airlock.local;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.containment.ContainedEnvironment;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Issue 31, "kernel-enforced by default": with no {@code airlock.local.isolation} set, every
 * profile runs its commands under bubblewrap where it runs here; where it cannot, the first exec
 * says so once and doctor names what a command can reach.
 */
class DefaultIsolationTest {
    @TempDir
    Path work;

    private Environment open(String... extra) {
        String[] kv = Stream.concat(Stream.of("airlock.container", "no", "airlock.local.workdir", work.toString()),
                Stream.of(extra)).toArray(String[]::new);
        return Environments.open(Settings.of(kv));
    }

    private static void requireBubblewrap() {
        BubblewrapRequirement.require();
    }

    private static String sh(Environment env, String command) {
        ExecResult r = env.exec(ExecRequest.builder(command).timeout(Duration.ofSeconds(60)).build());
        assertEquals(0, r.exitCode(), () -> command + ": " + r.stderr().text());
        return r.stdout().text();
    }

    @Test
    void theDefaultIsBubblewrapWithTheRealHomeShadowAndHostSocketsOutOfSight() throws Exception {
        requireBubblewrap();
        Path passwdHome = Path.of(System.getProperty("user.home"));
        boolean homeHasEntries;
        try (Stream<Path> entries = Files.list(passwdHome)) {
            homeHasEntries = entries.findAny().isPresent();
        }
        assumeTrue(homeHasEntries, "the passwd home " + passwdHome + " is empty here, so hiding it shows nothing");
        try (Environment env = open()) {
            assertTrue(((ContainedEnvironment) env).isolation().startsWith("bwrap:"), ((ContainedEnvironment) env).isolation());
            assertEquals("", sh(env, "ls -A " + passwdHome), "the real home is visible");
            assertEquals("0", sh(env, "cat /etc/shadow 2>/dev/null | wc -c").trim(), "the password hashes are readable");
            assertEquals("none", sh(env, "for s in /run/docker.sock /var/run/docker.sock /run/containerd/containerd.sock;"
                    + " do [ -e $s ] && echo $s; done; echo none").trim(), "a host socket is reachable");
            sh(env, "echo kept > made-inside");
        }
        assertEquals("kept\n", Files.readString(work.resolve("made-inside")), "the workdir is the commands' to write");
    }

    /** /tmp is the environment's own: what one command or write leaves there the next finds; the host's /tmp never sees it. */
    @Test
    void tmpIsTheEnvironmentsOwnAcrossItsCommandsAndGoesWithIt() throws Exception {
        requireBubblewrap();
        String name = "airlock-own-tmp-" + System.nanoTime();
        String privateDir;
        try (Environment env = open()) {
            privateDir = env.target().privateDir();
            assertEquals("", sh(env, "ls -A \"$TMPDIR\""), "the children's TMPDIR starts empty");
            sh(env, "echo from-a-command > /tmp/" + name);
            env.files().write("/tmp/" + name + ".w", "from-a-write".getBytes(StandardCharsets.UTF_8));
            assertEquals("from-a-command\nfrom-a-write", sh(env, "cat /tmp/" + name + " /tmp/" + name + ".w"));
            assertFalse(Files.exists(Path.of("/tmp", name)), "the command wrote the host's /tmp");
            assertFalse(Files.exists(Path.of("/tmp", name + ".w")), "the write went to the host's /tmp");
        }
        assertFalse(Files.exists(Path.of(privateDir)), "the environment's temp dir outlived it");
    }

    @Test
    void aReadableBindOpensAPathOfTheHiddenHomeAndNothingBeside() throws Exception {
        requireBubblewrap();
        Path home = Path.of(System.getenv("HOME")); // the test JVM's own HOME, hidden as the real one is
        Path mine = Files.createTempDirectory(home, ".airlock-readable-test-");
        try {
            Path tool = Files.createDirectories(mine.resolve("tool"));
            Files.writeString(tool.resolve("bin"), "tool bytes");
            Files.writeString(mine.resolve("beside"), "not given");
            try (Environment env = open("airlock.local.readable.tool", tool.toString())) {
                assertEquals("tool bytes", sh(env, "cat " + tool.resolve("bin")));
                assertEquals("hidden", sh(env, "[ -e " + mine.resolve("beside") + " ] || echo hidden").trim());
                ExecResult write = env.exec(ExecRequest.of("echo x > " + tool.resolve("bin")));
                assertTrue(write.exitCode() != 0, "a readable bind was writable");
            }
            assertEquals("tool bytes", Files.readString(tool.resolve("bin")));
        } finally {
            HostDirs.removeTree(mine);
        }
    }

    @Test
    void theRealHomeAsHomeNeedsIsolationNoneSaidInOneLine() {
        requireBubblewrap();
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> open("airlock.home-mode", "real"));
        assertTrue(e.getMessage().contains("airlock.local.isolation=none") && !e.getMessage().contains("\n"), e.getMessage());
    }

    /**
     * The pid namespace ends with its init: a {@code setsid}'d grandchild (its own session, out of
     * the command's process group) is gone once a timed-out exec has its result.
     */
    @Test
    void aSetsidGrandchildDoesNotOutliveATimeout() throws Exception {
        requireBubblewrap();
        String marker = "4" + (System.nanoTime() % 1_000_000) + ".5";
        String argv = "sleep " + marker; // Procs joins argv with spaces
        try (Environment env = open()) {
            ExecResult r = env.exec(ExecRequest.builder("setsid sleep " + marker + " & sleep 60")
                    .timeout(Duration.ofSeconds(2)).build());
            assertTrue(r.timedOut(), "the exec did not time out");
            assertTrue(Procs.eventually(20_000, () -> Procs.withArgv(argv).isEmpty()),
                    "the setsid'd grandchild outlived the timeout: " + Procs.withArgv(argv));
        }
    }

    /**
     * A timeout's TERM reaches the command inside the sandbox as a TERM, with the grace to run its
     * traps: bwrap dies of a TERM and would otherwise take the namespace down with a KILL.
     */
    @Test
    void aTimedOutCommandGetsItsTermAndRunsItsTrap() throws Exception {
        requireBubblewrap();
        try (Environment env = open("airlock.kill.grace", "10s")) { // a grace no loaded machine outlasts
            ExecResult r = env.exec(ExecRequest.builder("trap 'sleep 0.3; echo cleaned > trap-ran; exit 0' TERM; echo up; while :; do sleep 0.05; done")
                    .timeout(Duration.ofSeconds(1)).build());
            assertTrue(r.timedOut(), "the exec did not time out");
            assertEquals("up\n", r.stdout().text());
        }
        assertEquals("cleaned\n", Files.readString(work.resolve("trap-ran")), "the command never saw its TERM");
    }

    /** Without a usable bubblewrap the default falls back to none, warns at the first exec only, and doctor lists the exits. */
    @Test
    void withoutBubblewrapTheFirstExecWarnsOnceAndTheIsolationLineNamesTheExits() {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        String isolation;
        try (Environment env = open("airlock.local.bwrap", "/nonexistent/bwrap")) {
            isolation = ((ContainedEnvironment) env).isolation();
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            try {
                sh(env, "true");
                sh(env, "true");
            } finally {
                System.setErr(err);
            }
        }
        assertTrue(isolation.startsWith("none, because bubblewrap is not at /nonexistent/bwrap"), isolation);
        for (String exit : List.of("the passwd home", "/usr/bin/crontab by full path", "/proc/PID/environ", "a link flipped after the check")) {
            assertTrue(isolation.contains(exit), exit + ": " + isolation);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        String line = "commands on this machine are not contained: bubblewrap is not at /nonexistent/bwrap";
        assertTrue(log.contains(line), "no warning at the first exec: " + log);
        assertEquals(log.indexOf(line), log.lastIndexOf(line), "warned more than once: " + log);
        assertFalse(isolation.contains("\n"), isolation);
    }

    @Test
    void isolationNoneIsAChoiceThatDoesNotWarn() {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (Environment env = open("airlock.local.isolation", "none")) {
            assertTrue(((ContainedEnvironment) env).isolation().startsWith("none, chosen with airlock.local.isolation=none"));
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            try {
                sh(env, "true");
            } finally {
                System.setErr(err);
            }
        }
        assertFalse(captured.toString(StandardCharsets.UTF_8).contains("not contained"), captured.toString(StandardCharsets.UTF_8));
    }
}
