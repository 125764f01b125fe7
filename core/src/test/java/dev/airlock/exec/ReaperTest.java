package dev.airlock.exec;

import dev.airlock.spi.RemoteProcess;
import dev.airlock.StdinMode;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reaper on real process groups: TERM, KILL only for what is left, nothing for a stranger. */
class ReaperTest {
    @TempDir
    Path dir;

    private HostBackend b;
    private Process group;

    private HostBackend open() {
        b = new HostBackend(Settings.of("airlock.container", "no", "airlock.private-dir.base", dir.toString(),
                "airlock.kill.grace", "300ms"), StdinMode.PIPE, true, List.of());
        return b;
    }

    @AfterEach
    void cleanUp() {
        if (group != null) {
            group.destroyForcibly();
        }
        if (b != null) {
            b.env.close();
        }
    }

    /** A process group of its own; waits until setsid made it. */
    private Reaper.Identity start(String script) throws Exception {
        group = new ProcessBuilder("setsid", "sh", "-c", script).start();
        long pid = group.pid();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!b.groupState(pid).alive()) {
            assertTrue(System.nanoTime() < until, "the group never formed");
            Thread.sleep(10);
        }
        return new Reaper.Identity(pid, HostBackend.startTime(pid));
    }

    private static RemoteProcess handle(long pid) {
        return new RemoteProcess() {
            @Override
            public java.io.OutputStream stdin() {
                return java.io.OutputStream.nullOutputStream();
            }

            @Override
            public java.io.InputStream stdout() {
                return java.io.InputStream.nullInputStream();
            }

            @Override
            public java.io.InputStream stderr() {
                return java.io.InputStream.nullInputStream();
            }

            @Override
            public int waitFor() {
                return 0;
            }

            @Override
            public OptionalLong processGroup() {
                return OptionalLong.of(pid);
            }
        };
    }

    @Test
    void aGroupThatIgnoresTermGetsKillAfterTheGrace() throws Exception {
        open();
        Reaper.Identity id = start("trap '' TERM; sleep 30 & wait");
        b.reaper().terminate(handle(id.pgid()), id, () -> false);
        assertEquals(List.of("TERM " + id.pgid(), "KILL " + id.pgid()), b.signals);
        assertTrue(group.waitFor(10, TimeUnit.SECONDS), "the group survived SIGKILL");
    }

    @Test
    void aGroupThatEndsOnTermGetsNothingMore() throws Exception {
        open();
        // One process, reaped by this JVM: an orphan's zombie lingers where PID 1 reaps slowly, and
        // kill -0 (the default group read) still counts it.
        Reaper.Identity id = start("exec sleep 30");
        b.reaper().terminate(handle(id.pgid()), id, () -> !group.isAlive());
        assertEquals(List.of("TERM " + id.pgid()), b.signals);
        assertFalse(group.isAlive());
    }

    @Test
    void aStrangerWithTheSameGroupIdIsNeverSignalled() throws Exception {
        open();
        Reaper.Identity real = start("sleep 30");
        Reaper.Identity recorded = new Reaper.Identity(real.pgid(), OptionalLong.of(real.start().orElse(0) + 1));
        assertFalse(b.reaper().signal(handle(real.pgid()), recorded, false));
        b.reaper().terminate(handle(real.pgid()), recorded, () -> false);
        assertEquals(List.of(), b.signals);
        assertTrue(group.isAlive());
    }

    @Test
    void aGoneGroupIsNotSignalled() throws Exception {
        open();
        Reaper.Identity id = start("exec sleep 30");
        group.destroyForcibly().waitFor();
        assertFalse(b.reaper().signal(handle(id.pgid()), id, true));
        assertEquals(List.of(), b.signals);
    }

    @Test
    void withoutAGroupTheBackendsOwnKillIsAsked() throws Exception {
        open();
        Reaper.Identity id = start("sleep 30");
        // No identity: only the backend's own kill could help; the default one cannot without a group.
        assertFalse(b.reaper().signal(handle(id.pgid()), null, false));
        assertEquals(List.of("TERM -1"), b.signals);
        assertTrue(group.isAlive());
    }

    /**
     * A target that never took the SIGTERM within the grace (each try failed or ran past its
     * deadline, as a slow podman exec does) still gets the SIGKILL: the tree never outlives the kill.
     */
    @Test
    void aTermThatNeverGetsThroughIsFollowedByKill() throws Exception {
        open();
        Reaper.Identity id = start("trap '' TERM; sleep 30 & wait");
        b.term = HostBackend.Fault.FAIL;
        b.reaper().terminate(handle(id.pgid()), id, () -> false);
        assertEquals("KILL " + id.pgid(), b.signals.get(b.signals.size() - 1), "no SIGKILL after the failed TERMs: " + b.signals);
        assertTrue(group.waitFor(10, TimeUnit.SECONDS), "the group survived a kill whose TERM never got through");
    }

    /** After a lost connection the target may not answer at first: the kill keeps trying within its reach. */
    @Test
    void aKillThatCannotReachTheTargetYetIsTriedAgainWithinItsReach() throws Exception {
        open();
        Reaper.Identity id = start("sleep 30 & wait");
        b.kill = HostBackend.Fault.FAIL;
        Thread heal = new Thread(() -> {
            try {
                Thread.sleep(1_000); // well past the 300 ms grace: one try (or tries within the grace) would give up
            } catch (InterruptedException e) {
                return;
            }
            b.kill = HostBackend.Fault.NONE;
        });
        heal.start();
        b.reaper().terminate(handle(id.pgid()), id, () -> false, java.time.Duration.ofSeconds(20));
        heal.join();
        assertTrue(group.waitFor(10, TimeUnit.SECONDS), "the group survived a kill that was not retried");
        assertTrue(b.signals.size() > 2, "one try only: " + b.signals);
        assertEquals("TERM " + id.pgid(), b.signals.get(0));
    }

    /** An exec whose launcher record never came (the connection died first) is found by its nonce. */
    @Test
    void aGroupWhoseRecordNeverCameIsFoundByTheNonceInItsCommandLine() throws Exception {
        open();
        String nonce = dev.airlock.shell.Launcher.nonce();
        Reaper.Identity id = start(": " + nonce + "; sleep 30 & wait");
        assertEquals(id, b.reaper().find(nonce, java.time.Duration.ofSeconds(5)));
        assertEquals(null, b.reaper().find(dev.airlock.shell.Launcher.nonce(), java.time.Duration.ofSeconds(5)));
    }

    /** The backend's wrapper shell (a session leader of its own) holds the nonce too: its child is the command's group. */
    @Test
    void theCommandsShellIsTheMatchWhoseParentAlsoMatched() {
        assertEquals(new Reaper.Identity(200, OptionalLong.of(7)), Reaper.pick("100 1 5\n200 100 7\n"));
        assertEquals(new Reaper.Identity(100, OptionalLong.of(5)), Reaper.pick("100 1 5\n"));
        assertEquals(new Reaper.Identity(100, OptionalLong.empty()), Reaper.pick("100 1 \n"));
        assertEquals(null, Reaper.pick("100 1 5\n300 1 9\n"), "two unrelated matches: ambiguous, nothing is killed");
        assertEquals(null, Reaper.pick(""));
    }
}
