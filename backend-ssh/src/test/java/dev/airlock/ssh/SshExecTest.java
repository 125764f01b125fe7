package dev.airlock.ssh;

import dev.airlock.BackendException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Commands against a real OpenSSH server on loopback. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SshExecTest {
    private SshdServer server;
    private Environment env;

    @BeforeAll
    void start() throws Exception {
        server = SshdServer.start();
        env = Environments.open(server.settings());
    }

    @AfterAll
    void stop() throws Exception {
        if (env != null) {
            env.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void eightMebibytesOfStdinComeBackByteExact() {
        byte[] data = new byte[8 << 20];
        new Random(7).nextBytes(data);
        for (int i = 0; i < data.length; i += 4096) {
            data[i] = 0; // NUL bytes throughout, and invalid UTF-8 from the random bytes
        }
        data[data.length - 1] = 0;
        ExecResult r = env.exec(ExecRequest.builder("cat").stdin(data).build());
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertEquals(data.length, r.stdout().size());
        assertArrayEquals(data, r.stdout().bytes());
        assertEquals(0, r.stderr().size());
    }

    @Test
    void aCommandThatKillsOrRewritesItsParentNeverGetsAnotherExitCode() {
        // No wrapper of ours is the command's parent, sshd's session process is: killing it, or
        // writing exit_group(0) (x86-64) into its code, loses the connection (an error) or leaves
        // the status the command's own. A wrapper shell reported 137 and 0 here.
        String rewrite = "set -- $(cat /proc/$PPID/syscall); a=$(printf %d \"$9\");"
                + " printf '\\061\\377\\270\\347\\000\\000\\000\\017\\005' | dd of=/proc/$PPID/mem bs=1 seek=\"$a\" conv=notrunc";
        for (String attack : List.of("kill -9 $PPID", rewrite)) {
            // a hostile command: the guard would ask about the write to /proc/PID/mem; the promise is the transport's
            try (Environment own = Environments.open(server.settings().with("airlock.guard", "off"))) {
                try {
                    ExecResult r = own.exec(ExecRequest.builder(attack + "\nexit 7").timeout(Duration.ofMinutes(1)).build());
                    assertEquals(7, r.exitCode(), "`" + attack + "` changed the command's exit code; stderr: " + r.stderr().text());
                } catch (BackendException e) {
                    assertTrue(e.getMessage().contains("lost"), "`" + attack + "`: " + e.getMessage());
                }
            }
        }
    }

    @Test
    void stdinEndsAndEmptyInputIsEndOfInput() {
        assertEquals("0\n", env.exec(ExecRequest.builder("wc -c").stdin(new byte[0]).build()).stdout().text());
        // No stdin at all: the command sees end-of-input at once rather than hanging.
        assertEquals("", env.exec(ExecRequest.of("cat")).stdout().text());
        byte[] noNewline = {'a', 0, 'b'};
        assertArrayEquals(noNewline, env.exec(ExecRequest.builder("cat").stdin(noNewline).build()).stdout().bytes());
    }

    @Test
    void stderrArrivesApartFromStdoutAndWithoutTheMarker() {
        ExecResult r = env.exec(ExecRequest.of("printf 'out\\000\\n'; printf 'err\\377' >&2; printf more; printf '@x\\n' >&2"));
        assertArrayEquals(new byte[] {'o', 'u', 't', 0, '\n', 'm', 'o', 'r', 'e'}, r.stdout().bytes());
        assertArrayEquals(new byte[] {'e', 'r', 'r', (byte) 0xff, '@', 'x', '\n'}, r.stderr().bytes());
    }

    @Test
    void exitCodesAndSignals() {
        for (int code : new int[] {0, 1, 42, 255}) {
            assertEquals(code, env.exec(ExecRequest.of("exit " + code)).exitCode());
        }
        // The command's own shell killed by a signal (sshd's child itself): sshd reports exit-signal
        // by name, mapped to 128+N. A signal to its parent is not the command's status any more (see below).
        assertEquals(143, env.exec(ExecRequest.of("kill -TERM $$")).exitCode());
        assertEquals(137, env.exec(ExecRequest.of("kill -KILL $$")).exitCode());
        assertEquals(138, env.exec(ExecRequest.of("kill -USR1 $$")).exitCode());
    }

    /** The status comes with exit-status, not with the channel's close, which a background job holding stdout delays. */
    @Test
    void theStatusArrivesWhenTheShellExitsThoughABackgroundJobHoldsTheOutput() {
        ExecResult r = env.exec(ExecRequest.builder("sleep 30 & echo started; exit 3").timeout(Duration.ofSeconds(4)).build());
        assertEquals(3, r.exitCode(), r.stderr().text());
        assertFalse(r.timedOut());
        assertEquals("started\n", r.stdout().text());
    }

    /**
     * After the status, the output grace decides: what the background job writes within it is
     * kept, and then the job ends with its exec, as on every backend.
     */
    @Test
    void theOutputGraceAppliesAfterTheStatusAndTheBackgroundJobEndsWithTheExec() throws Exception {
        Path pidFile = server.dir.resolve("background.pid");
        try (Environment own = Environments.open(server.settings("airlock.exec.output-grace", "3s"))) {
            ExecResult r = own.exec(ExecRequest.builder("(sleep 1; echo late; exec sleep 60) & echo $! > " + pidFile
                    + "; echo started; exit 3").timeout(Duration.ofSeconds(20)).build());
            assertEquals(3, r.exitCode(), r.stderr().text());
            assertFalse(r.timedOut());
            assertEquals("started\nlate\n", r.stdout().text());
            long pid = awaitPid(pidFile);
            assertTrue(gone(pid, 25), "the background job " + pid + " outlived its exec");
        }
    }

    @Test
    void timeoutKillsTheWholeTreeIncludingGrandchildren() throws Exception {
        Path pidFile = server.dir.resolve("grandchild.pid");
        ExecResult r = env.exec(ExecRequest.builder(
                "sh -c 'sleep 300 & echo $! > " + pidFile + "; wait'; echo not-reached")
                .timeout(Duration.ofSeconds(2)).build());
        assertEquals(124, r.exitCode());
        assertTrue(r.timedOut());
        assertFalse(r.stdout().text().contains("not-reached"));
        long pid = Long.parseLong(Files.readString(pidFile).trim());
        assertTrue(gone(pid), "the grandchild sleep " + pid + " survived the timeout");
    }

    @Test
    void cancelKillsARunningCommand() throws Exception {
        Path pidFile = server.dir.resolve("cancelled.pid");
        Execution e = env.start(ExecRequest.of("echo $$ > " + pidFile + "; sleep 300"));
        long pid = awaitPid(pidFile);
        e.cancel();
        ExecResult r = e.await(Duration.ofSeconds(60)).orElseThrow();
        assertEquals(130, r.exitCode());
        assertTrue(r.cancelled());
        assertTrue(gone(pid), "the cancelled command " + pid + " is still running");
    }

    @Test
    void sixteenConcurrentExecsAllSucceed() throws Exception {
        List<Execution> runs = new ArrayList<>();
        AtomicInteger maxConnections = new AtomicInteger();
        AtomicBoolean watching = new AtomicBoolean(true);
        Thread watcher = new Thread(() -> {
            while (watching.get()) {
                maxConnections.accumulateAndGet(SshBackend.of(env).openConnections(), Math::max);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException ie) {
                    return;
                }
            }
        });
        watcher.start();
        for (int i = 0; i < 16; i++) {
            runs.add(env.start(ExecRequest.builder("read x; sleep 2; echo \"$x\" done").stdin(("n" + i + "\n").getBytes(StandardCharsets.UTF_8)).build()));
        }
        for (int i = 0; i < 16; i++) {
            ExecResult r = runs.get(i).await(Duration.ofSeconds(120)).orElseThrow();
            assertEquals(0, r.exitCode(), r.stderr().text());
            assertEquals("n" + i + " done\n", r.stdout().text());
        }
        watching.set(false);
        watcher.join();
        // 16 channels at once exceed one connection's share (8; OpenSSH allows 10): the pool opened more.
        assertTrue(maxConnections.get() >= 2, "max connections seen: " + maxConnections.get());
    }

    @Test
    void envValuesNeverAppearInAnyCommandLine() throws Exception {
        String value = "v-" + Long.toHexString(new Random().nextLong()) + " with 'quotes' and $dollars";
        Path marker = server.dir.resolve("env.started");
        Execution e = env.start(ExecRequest.builder("touch " + marker + "; sleep 2; printf %s \"$AIRLOCK_TEST_VALUE\"")
                .env("AIRLOCK_TEST_VALUE", value).build());
        awaitFile(marker);
        // sshd, the login shell and the command all run on this machine: read every argv.
        List<String> leaks = new ArrayList<>();
        try (var dirs = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) dirs::iterator) {
                if (!p.getFileName().toString().matches("\\d+")) {
                    continue;
                }
                try {
                    String cmdline = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8);
                    if (cmdline.contains(value.substring(0, 18))) {
                        leaks.add(p.getFileName() + ": " + cmdline.replace('\0', ' '));
                    }
                } catch (java.io.IOException ignored) {
                    // the process ended while we looked
                }
            }
        }
        ExecResult r = e.await(Duration.ofSeconds(60)).orElseThrow();
        assertEquals(value, r.stdout().text());
        assertEquals(List.of(), leaks);
        // The staged 0600 env file was read and removed before the command ran.
        try (var staged = Files.list(Path.of(env.target().stagingDir()))) {
            assertEquals(List.of(), staged.toList());
        }
    }

    @Test
    void theTargetIsProbedAndChildrenGetTheScratchTmpdir() {
        assertEquals(System.getProperty("user.name"), env.target().user());
        ExecResult r = env.exec(ExecRequest.builder("printf '%s|%s|%s' \"$TMPDIR\" \"$AIRLOCK_REAL_HOME\" \"$(pwd)\"").cwd("/").build());
        assertEquals(env.target().scratchDir() + "|" + env.target().home() + "|/", r.stdout().text());
        assertTrue(Files.isDirectory(Path.of(env.target().scratchDir())));
    }

    @Test
    void filesAreWrittenAndReadByteExact() throws Exception {
        byte[] data = new byte[300_000];
        new Random(3).nextBytes(data);
        String path = server.dir.resolve("sub dir/f'ile").toString();
        env.files().write(path, data);
        try (var in = env.files().read(path)) {
            assertArrayEquals(data, in.readAllBytes());
        }
        assertArrayEquals(data, Files.readAllBytes(Path.of(path)));
    }

    @Test
    void outputStreamsToTheCallersSinks() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        ExecResult r = env.exec(ExecRequest.builder("head -c 100000 /dev/zero; echo e >&2").output(out, err).build());
        assertEquals(0, r.exitCode());
        assertEquals(100_000, out.size());
        assertEquals("e\n", err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void closeRemovesThePrivateDirAndLogsOut() throws Exception {
        Environment own = Environments.open(server.settings());
        Path priv = Path.of(own.target().privateDir());
        own.exec(ExecRequest.of("touch \"$TMPDIR/scratch-file\""));
        assertTrue(Files.exists(priv.resolve("tmp/scratch-file")));
        own.close();
        assertFalse(Files.exists(priv), priv + " survived close");
        assertEquals(0, SshBackend.of(own).openConnections());
    }

    static boolean gone(long pid) throws InterruptedException {
        return gone(pid, 500);
    }

    /** Whether {@code pid} is gone within {@code polls} polls 20 ms apart; a zombie (killed, not reaped yet) counts as gone. */
    static boolean gone(long pid, int polls) throws InterruptedException {
        for (int i = 0; i < polls; i++) {
            if (ProcessHandle.of(pid).map(ph -> ph.isAlive()).orElse(false) && !zombie(pid)) {
                Thread.sleep(20);
                continue;
            }
            return true;
        }
        return false;
    }

    private static boolean zombie(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException e) {
            return true;
        }
    }

    static long awaitPid(Path file) throws Exception {
        awaitFile(file);
        for (int i = 0; i < 500; i++) {
            String s = Files.readString(file).trim();
            if (!s.isEmpty()) {
                return Long.parseLong(s);
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no pid in " + file);
    }

    static void awaitFile(Path file) throws InterruptedException {
        for (int i = 0; i < 1500 && !Files.exists(file); i++) {
            Thread.sleep(20);
        }
        assertTrue(Files.exists(file), file + " never appeared");
    }
}
