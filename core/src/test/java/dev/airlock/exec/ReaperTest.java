package dev.airlock.exec;

import dev.airlock.spi.RemoteProcess;
import dev.airlock.StdinMode;
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
    /** The signals a backend with its own kill took (see {@link #openWithOwnKill}). */
    private final List<String> taken = new java.util.concurrent.CopyOnWriteArrayList<>();

    private HostBackend open() {
        return open("300ms");
    }

    /**
     * The kill bound (grace plus slack) is each group read's and signal's deadline: a slack far above
     * what a host process takes on a loaded machine, so that only the faults a test sets fail a try.
     */
    private HostBackend open(String grace) {
        b = new HostBackend(HostBackend.settings(dir, "airlock.kill.grace", grace, "airlock.kill.slack", "10s"),
                StdinMode.PIPE, true, List.of());
        return b;
    }

    /** Sets {@code f} back to NONE after {@code ms}, as a target that comes back. */
    private static Thread healAfter(long ms, Runnable heal) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                return;
            }
            heal.run();
        });
        t.start();
        return t;
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

    /**
     * After a lost connection the target may not answer at first: the kill keeps trying within its
     * reach, past the grace. Six failed tries wait out the backoff (10 + 20 + ... + 320 ms, 630 ms
     * at least, however loaded the machine), past the 300 ms grace; the seventh gets through.
     */
    @Test
    void aKillThatCannotReachTheTargetYetIsTriedAgainWithinItsReach() throws Exception {
        open();
        Reaper.Identity id = start("sleep 30 & wait");
        int failures = 6;
        b.termFailures.set(failures);
        long began = System.nanoTime();
        b.reaper().terminate(handle(id.pgid()), id, () -> false, java.time.Duration.ofSeconds(20));
        assertTrue(group.waitFor(10, TimeUnit.SECONDS), "the group survived a kill that was not retried: " + b.signals);
        assertEquals(failures + 1, count("TERM"), "the SIGTERM was not tried until it got through: " + b.signals);
        assertEquals("TERM " + id.pgid(), b.signals.get(0));
        assertTrue(System.nanoTime() - began >= TimeUnit.MILLISECONDS.toNanos(630), "the tries did not back off");
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

    /** A lookup that cannot reach the target at first is tried again, with backoff, within its reach. */
    @Test
    void aLookupByNonceThatFailsIsTriedAgainWithinItsReach() throws Exception {
        open();
        String nonce = dev.airlock.shell.Launcher.nonce();
        Reaper.Identity id = start(": " + nonce + "; sleep 30 & wait");
        b.script = HostBackend.Fault.FAIL;
        int before = b.scripts.get();
        Thread heal = healAfter(300, () -> b.script = HostBackend.Fault.NONE);
        assertEquals(id, b.reaper().find(nonce, java.time.Duration.ofSeconds(5)), "the lookup was not tried again");
        heal.join();
        int tries = b.scripts.get() - before;
        assertTrue(tries < 30, "the lookups did not back off: " + tries + " in 0.3 s");
    }

    @Test
    void aLookupThatNeverReachesTheTargetGivesUpAtItsReach() throws Exception {
        open();
        b.script = HostBackend.Fault.FAIL;
        long began = System.nanoTime();
        assertEquals(null, b.reaper().find(dev.airlock.shell.Launcher.nonce(), java.time.Duration.ofMillis(300)));
        assertTrue(System.nanoTime() - began < TimeUnit.SECONDS.toNanos(5), "the lookup ran far past its reach");
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

    /** A group that takes a moment to end after SIGTERM (a trap that cleans up) is given the grace: no SIGKILL. */
    @Test
    void aGroupThatEndsWithinTheGraceGetsNoKill() throws Exception {
        open("3s");
        Reaper.Identity id = start("trap 'sleep 0.3; exit 0' TERM; sleep 30 & wait");
        b.reaper().terminate(handle(id.pgid()), id, () -> !group.isAlive());
        assertEquals(List.of("TERM " + id.pgid()), b.signals, "a SIGKILL came before the grace was over");
        assertFalse(group.isAlive());
    }

    /** A group that forms after the kill began (setsid had not run yet when launch returned) is still signalled. */
    @Test
    void aGroupThatFormsAfterTheKillBeganIsSignalledOnceItIsThere() throws Exception {
        open("3s");
        group = new ProcessBuilder("sh", "-c", "sleep 0.3; exec setsid sleep 30").start();
        long pid = group.pid();
        Reaper.Identity id = new Reaper.Identity(pid, HostBackend.startTime(pid));
        assertFalse(b.groupState(pid).alive(), "not a group yet");
        b.reaper().terminate(handle(pid), id, () -> !group.isAlive());
        assertEquals(List.of("TERM " + pid), b.signals);
        assertTrue(group.waitFor(10, TimeUnit.SECONDS), "the group that formed late was never signalled");
    }

    /**
     * A SIGTERM that got through only after failed tries (past the grace) starts the grace anew.
     * Eight failed tries wait out the backoff (2.27 s at least), past the 2 s grace; the trap's
     * 0.3 s then fits a fresh grace with room to spare on a loaded machine.
     */
    @Test
    void aTermThatGotThroughLateIsGivenItsGraceBeforeAnyKill() throws Exception {
        open("2s");
        Reaper.Identity id = start("trap 'sleep 0.3; exit 0' TERM; sleep 30 & wait");
        b.termFailures.set(8);
        b.reaper().terminate(handle(id.pgid()), id, () -> !group.isAlive(), java.time.Duration.ofSeconds(20));
        assertEquals(9, count("TERM"), "the SIGTERM was not tried until it got through: " + b.signals);
        assertTrue(b.signals.stream().allMatch(x -> x.equals("TERM " + id.pgid())), "a SIGKILL cut the late TERM's grace: " + b.signals);
        assertTrue(group.waitFor(10, TimeUnit.SECONDS));
    }

    /** A SIGKILL that cannot reach the target yet is tried again, with backoff, within the reach. */
    @Test
    void aKillThatFailsIsTriedAgainWithinItsReach() throws Exception {
        open();
        Reaper.Identity id = start("trap '' TERM; sleep 30 & wait");
        int failures = 4;
        b.forceKillFailures.set(failures);
        long began = System.nanoTime();
        b.reaper().terminate(handle(id.pgid()), id, () -> false, java.time.Duration.ofSeconds(20));
        assertTrue(group.waitFor(10, TimeUnit.SECONDS), "the group survived a SIGKILL that was not retried: " + b.signals);
        assertEquals(failures + 1, count("KILL"), "the SIGKILL was not tried until it got through: " + b.signals);
        // the grace (300 ms), then the backoff between the failed tries (10 + 20 + 40 + 80 ms)
        assertTrue(System.nanoTime() - began >= TimeUnit.MILLISECONDS.toNanos(300 + 150), "the SIGKILL tries did not back off");
    }

    @Test
    void aLiveGroupThatIsTheLaunchedOneIsSignalled() throws Exception {
        open();
        Reaper.Identity id = start("exec sleep 30");
        assertTrue(b.reaper().signal(handle(id.pgid()), id, true), "the launched group was not signalled");
        assertTrue(group.waitFor(10, TimeUnit.SECONDS));
        assertEquals(List.of("KILL " + id.pgid()), b.signals);
    }

    /** A backend whose own kill needs no process group (it kills the command by its handle), as a sandbox API's does. */
    private HostBackend openWithOwnKill(String grace) {
        b = new HostBackend(HostBackend.settings(dir, "airlock.kill.grace", grace, "airlock.kill.slack", "10s"),
                StdinMode.PIPE, true, List.of()) {
            @Override
            public void kill(RemoteProcess process, OptionalLong group, boolean force, dev.airlock.spi.Deadline deadline)
                    throws java.io.IOException {
                if (group.isEmpty() && (force ? forceKill : term) == HostBackend.Fault.NONE) {
                    signals.add((force ? "KILL " : "TERM ") + "-1");
                    taken.add((force ? "KILL " : "TERM ") + "-1");
                    return;
                }
                super.kill(process, group, force, deadline); // records the signal, then fails as its fault says
            }
        };
        return b;
    }

    private long count(String signal) {
        return b.signals.stream().filter(x -> x.startsWith(signal)).count();
    }

    /** Without a group the backend's own kill is the means: when it took the signal, the command was signalled. */
    @Test
    void aBackendsOwnKillThatTookTheSignalCountsAsSignalled() {
        openWithOwnKill("300ms");
        assertTrue(b.reaper().signal(handle(1), null, false));
        assertEquals(List.of("TERM -1"), b.signals);
    }

    /**
     * A target that is not reached is tried again after waits that double (10, 20, 40 ... ms), both
     * for the SIGTERM and for the SIGKILL (tried again past the reach, until it gets through):
     * 7 tries in half a second at most, not one every few ms.
     */
    @Test
    void triesThatDoNotReachTheTargetAreSpacedByTheBackoff() throws Exception {
        openWithOwnKill("100ms");
        b.term = HostBackend.Fault.FAIL;
        b.reaper().terminate(handle(1), null, () -> false, java.time.Duration.ofMillis(500));
        assertTrue(count("TERM") > 2, "the SIGTERM was not tried again: " + b.signals);
        assertTrue(count("TERM") <= 15, "the SIGTERM tries did not back off: " + count("TERM") + " in 0.5 s");

        b.signals.clear();
        b.term = HostBackend.Fault.NONE;
        b.forceKill = HostBackend.Fault.FAIL;
        Thread heal = healAfter(500, () -> b.forceKill = HostBackend.Fault.NONE);
        int[] looks = {0};
        assertTrue(b.reaper().terminate(handle(1), null, () -> looks[0]++ < 0, java.time.Duration.ofMillis(300)),
                "the SIGKILL never got through after the target came back");
        heal.join();
        assertEquals("TERM -1", b.signals.get(0));
        assertTrue(taken.contains("KILL -1"), "the SIGKILL never got through: " + b.signals);
        assertTrue(count("KILL") > 1, "the SIGKILL was not tried again: " + b.signals);
        assertTrue(count("KILL") <= 15, "the SIGKILL tries did not back off: " + count("KILL") + " in about 0.5 s");
        assertTrue(looks[0] <= 30, "the 100 ms grace was spun, not waited in 10 ms steps: " + looks[0] + " looks at the shell");
    }

    /**
     * A try that ran into its hook deadline leaves its thread interrupted; the kill clears that and
     * goes on trying (the SIGKILL still comes) instead of ending at its next wait.
     */
    @Test
    void aTryInterruptedAtItsDeadlineDoesNotEndTheKill() throws Exception {
        // (A backend whose SIGKILL gets through: one whose every SIGKILL fails is tried for the whole KILL_REACH.)
        openWithOwnKill("300ms");
        b.term = HostBackend.Fault.INTERRUPTED;
        b.reaper().terminate(handle(1), null, () -> false);
        assertTrue(count("TERM") > 1, "the SIGTERM was not tried again: " + b.signals);
        assertEquals(List.of("KILL -1"), taken, "no SIGKILL after the interrupted TERMs: " + b.signals);
        assertFalse(Thread.interrupted(), "the kill left its caller interrupted");
    }

    /** A lookup by nonce that ran into its hook deadline is tried again within its reach, not ended by the interrupt. */
    @Test
    void aLookupInterruptedAtItsDeadlineIsTriedAgain() throws Exception {
        open();
        b.script = HostBackend.Fault.INTERRUPTED;
        int before = b.scripts.get();
        assertEquals(null, b.reaper().find(dev.airlock.shell.Launcher.nonce(), java.time.Duration.ofMillis(300)));
        assertTrue(b.scripts.get() - before > 1, "the interrupted lookup was not tried again");
        assertFalse(Thread.interrupted(), "the lookup left its caller interrupted");
    }

    /** A group that is gone while its shell has ended is read once: the kill does not poll it until the grace is over. */
    @Test
    void aGoneGroupWhoseShellEndedIsReadOnce() throws Exception {
        open("1s");
        Reaper.Identity id = start("exec sleep 30");
        group.destroyForcibly().waitFor();
        int before = b.scripts.get();
        b.reaper().terminate(handle(id.pgid()), id, () -> true);
        assertEquals(1, b.scripts.get() - before, "the gone group was read again and again");
        assertEquals(List.of(), b.signals);
    }

    /** A leader that started at clock tick 0 has a start time, and it is checked like any other. */
    @Test
    void aLeaderStartOfZeroIsAStartTime() {
        assertEquals(new Reaper.Identity(100, OptionalLong.of(0)), Reaper.pick("100 1 0\n"));
    }

    /**
     * A target not reached for longer than the grace, but again within the reach, gets the SIGTERM
     * first (a TERM trap can run), not a SIGKILL at the grace's end.
     */
    @Test
    void aTargetReachedAgainWithinTheReachGetsTheTermFirst() throws Exception {
        openWithOwnKill("100ms");
        b.term = HostBackend.Fault.FAIL;
        Thread heal = healAfter(400, () -> b.term = HostBackend.Fault.NONE);
        b.reaper().terminate(handle(1), null, () -> false, java.time.Duration.ofSeconds(5));
        heal.join();
        assertEquals(List.of("TERM -1", "KILL -1"), taken, "signals that got through");
    }
}
