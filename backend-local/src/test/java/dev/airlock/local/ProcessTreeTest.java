package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Timeouts, cancels and close end the whole tree a command started, grandchildren included. */
class ProcessTreeTest {
    @TempDir
    Path dir;

    /**
     * Without a sandbox, the harder case: no pid namespace ends the tree with its init, only the
     * process group and the reaper do (and the pids written to files are the host's own).
     */
    private Environment open() {
        return Environments.open(Settings.of("airlock.container", "no", "airlock.local.isolation", "none"));
    }

    /** Starts a grandchild that ignores SIGTERM and records its pid, then waits. */
    private String treeCommand(String marker) {
        Path pidFile = dir.resolve(marker + ".pid");
        return "sh -c 'trap \"\" TERM; echo $$ > " + pidFile + "; exec sleep " + marker + "' &\n"
                + "while [ ! -s " + pidFile + " ]; do sleep 0.01; done\nsleep " + marker;
    }

    private long grandchild(String marker) throws Exception {
        Path pidFile = dir.resolve(marker + ".pid");
        assertTrue(Procs.eventually(5000, () -> Files.exists(pidFile) && Procs.read(pidFile).length > 1), "no pid file");
        return Long.parseLong(Files.readString(pidFile).trim());
    }

    @Test
    void aTimeoutLeavesNoGrandchildAlive() throws Exception {
        try (Environment env = open()) {
            ExecResult r = env.exec(ExecRequest.builder(treeCommand("3101")).timeout(Duration.ofMillis(700)).build());
            assertEquals(124, r.exitCode());
            assertTrue(r.timedOut());
            long pid = grandchild("3101");
            assertTrue(Procs.eventually(3000, () -> !Procs.alive(pid)), "the grandchild " + pid + " survived the timeout");
            assertTrue(Procs.withArgv("sleep 3101").isEmpty(), "a sleep 3101 survived");
        }
    }

    @Test
    void cancelKillsTheTreeAndReports130() throws Exception {
        try (Environment env = open()) {
            Execution e = env.start(ExecRequest.of(treeCommand("3102")));
            long pid = grandchild("3102");
            e.cancel();
            ExecResult r = e.await();
            assertEquals(130, r.exitCode());
            assertTrue(r.cancelled());
            // SIGKILL was sent before await returned; the kernel tears the process down right after.
            assertTrue(Procs.eventually(3000, () -> !Procs.alive(pid)), "the grandchild survived the cancel");
        }
    }

    @Test
    void closeKillsRunningTreesAndRemovesThePrivateDir() throws Exception {
        Environment env = open();
        Execution a = env.start(ExecRequest.of(treeCommand("3103")));
        Execution b = env.start(ExecRequest.of("sleep 3104"));
        long pid = grandchild("3103");
        assertTrue(Procs.eventually(5000, () -> !Procs.withArgv("sleep 3104").isEmpty()));
        String privateDir = env.target().privateDir();
        assertTrue(Files.isDirectory(Path.of(privateDir)));
        env.close();
        assertTrue(a.isDone() && b.isDone(), "close returned before its execs ended");
        assertEquals(130, a.await().exitCode());
        assertTrue(Procs.eventually(3000, () -> !Procs.alive(pid)));
        assertTrue(Procs.eventually(3000, () -> Procs.withArgv("sleep 3104").isEmpty()));
        assertFalse(Files.exists(Path.of(privateDir)), "the private dir was left behind");
    }

    @Test
    void interruptingTheCallerCancelsTheCommand() throws Exception {
        try (Environment env = open()) {
            ExecResult[] result = new ExecResult[1];
            Thread t = new Thread(() -> result[0] = env.exec(ExecRequest.of("sleep 3105")));
            t.start();
            assertTrue(Procs.eventually(5000, () -> !Procs.withArgv("sleep 3105").isEmpty()));
            t.interrupt();
            t.join(10_000);
            assertFalse(t.isAlive());
            assertEquals(130, result[0].exitCode());
            assertTrue(Procs.eventually(3000, () -> Procs.withArgv("sleep 3105").isEmpty()));
        }
    }

    @Test
    void aBackgroundProcessHoldingStdoutDoesNotHangTheExec() throws Exception {
        try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.exec.output-grace", "300ms",
                "airlock.local.isolation", "none"))) {
            ExecResult r = env.exec(ExecRequest.of("sleep 3106 & echo started"));
            assertEquals(0, r.exitCode());
            assertEquals("started\n", r.stdout().text());
            assertTrue(Procs.eventually(500, () -> Procs.withArgv("sleep 3106").isEmpty()),
                    "what a command left running ends with its exec");
        }
    }
}
