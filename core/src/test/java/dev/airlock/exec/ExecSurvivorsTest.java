package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import dev.airlock.exec.HostBackend.Fault;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import static dev.airlock.exec.HostBackend.HANG;
import static dev.airlock.exec.HostBackend.within;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The exec core's failure paths that survived every other test as mutants (issue 33), each on the
 * test backend given the failure mode a real transport has: a removal called on an interrupted
 * thread fails, a group's leader start time may be unknown, a group may be led by a wrapper.
 */
class ExecSurvivorsTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();


    private HostBackend open(StdinMode mode, boolean nativeEnv, String... more) {
        HostBackend b = new HostBackend(HostBackend.settings(dir, more), mode, nativeEnv, List.of());
        opened.add(b);
        return b;
    }

    private static void awaitStalls(HostBackend b, int n) throws InterruptedException {
        long until = System.nanoTime() + HANG.toNanos();
        while (b.stalls.get() < n) {
            assertTrue(System.nanoTime() < until, "no hook stalled");
            Thread.sleep(5);
        }
    }

    /**
     * An exec started while close runs, after close took the list of execs to stop (here while it
     * stops the sandbox), is refused, and nothing of it is staged or launched: no command starts
     * on an environment that is closing.
     */
    @Test
    void anExecStartedWhileCloseRunsIsRefusedAndNeverLaunched() throws Exception {
        HostBackend b = open(StdinMode.PAYLOAD, false);
        b.stop = Fault.STALL;
        Thread closer = new Thread(b.env::close);
        closer.start();
        awaitStalls(b, 1);
        assertThrows(EnvironmentClosedException.class, () -> b.start(ExecRequest.builder("echo ran").stdin(Payload.ofUtf8("x")).build()));
        b.release.countDown();
        closer.join(HANG.toMillis());
        assertFalse(closer.isAlive(), "close hung");
        assertEquals(List.of(), b.launchRequests);
        assertEquals(List.of(), b.stagedPaths);
    }

    /** After a sandbox-wide cancel the environment refuses execs too, saying why. */
    @Test
    void anExecStartedAfterASandboxWideCancelIsRefused() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true, "airlock.cancel", "sandbox");
        Execution e = b.start(ExecRequest.of("sleep 30"));
        b.awaitLaunched();
        e.cancel();
        assertTrue(within(e).cancelled());
        long until = System.nanoTime() + HANG.toNanos();
        while (b.stops.get() == 0) {
            assertTrue(System.nanoTime() < until, "the sandbox was never stopped");
            Thread.sleep(10);
        }
        EnvironmentClosedException x = assertThrows(EnvironmentClosedException.class, () -> b.start(ExecRequest.of("echo ran")));
        assertTrue(x.getMessage().contains("sandbox-wide cancel"), x.getMessage());
        assertEquals(1, b.launchRequests.size(), "only the cancelled exec was launched");
    }

    /**
     * A cancel interrupts a flow stuck in staging; that interrupt is the exec's, not its clean-up's:
     * the file staged before the stuck one is removed by the time the caller has the result (a
     * removal called on a thread still interrupted fails, as a remote call does).
     */
    @Test
    void aCancelsInterruptDoesNotReachTheCleanUp() throws Exception {
        // A slack far above the removal's time: the result waits for the clean-up, not for the bound.
        HostBackend b = open(StdinMode.PAYLOAD, false, "airlock.kill.slack", "20s");
        b.stagesBeforeFault = 1; // the env file is staged, the stdin stalls
        b.stage = Fault.STALL;
        Execution e = b.start(ExecRequest.builder("cat").stdin(Payload.ofUtf8("x")).build());
        awaitStalls(b, 1);
        e.cancel();
        assertTrue(within(e).cancelled());
        assertEquals(List.of(), b.stagedLeft(), "a staged file outlived the cancelled exec's result");
        assertEquals(List.of("stage"), b.interrupted);
        assertEquals(List.of(), b.launchRequests, "a cancelled exec was launched");
    }

    /**
     * Removing staged files is bounded by the kill bound, like every clean-up step: a removal that
     * hangs is given up on then, so the exec still ends well within a minute (the bound of a hook
     * that does the work, minutes, would hold its result and its slot that long).
     */
    @Test
    void aRemovalThatHangsIsGivenUpOnAtTheKillBound() throws Exception {
        HostBackend b = open(StdinMode.PAYLOAD, false);
        b.launch = Fault.FAIL;
        b.removal = Fault.STALL;
        Execution e = b.start(ExecRequest.builder("cat").stdin(Payload.ofUtf8("x")).build());
        BackendException x = assertThrows(BackendException.class, () -> e.await(HANG));
        assertTrue(x.getMessage().contains("could not start"), x.getMessage());
        assertEquals(List.of("remove", "remove"), b.interrupted, "the env and stdin files' removals were not cut at the bound");
        assertEquals(0, b.env.live().size(), "the exec held its slot");
    }

    /**
     * A group led by a wrapper shell (a sandbox API's process), whose backend knows no start time:
     * the launcher record's start time is its command shell's, not the group leader's, so it must
     * not be checked against the leader; the timed-out tree is killed.
     */
    @Test
    void aGroupLedByAWrapperIsKilledThoughOnlyTheCommandShellsStartIsRecorded() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        b.reportsStartTime = false;
        b.wrapperLeadsGroup = true;
        ExecResult r = within(b.start(ExecRequest.builder("echo $$; sleep 30").timeout(Duration.ofSeconds(2)).build()));
        assertTrue(r.timedOut());
        long group = b.launched.get(0).pid();
        long commandShell = Long.parseLong(r.stdout().text().strip());
        assertNotEquals(group, commandShell, "the wrapper did not lead the group: the test proves nothing");
        long until = System.nanoTime() + HANG.toNanos();
        while (!HostBackend.groupMembers(group).isEmpty()) {
            assertTrue(System.nanoTime() < until, "the timed-out tree survived: " + HostBackend.groupMembers(group));
            Thread.sleep(20);
        }
    }

    /**
     * Issue 33, defect 9: more start-up noise than the record parser's window before the record.
     * The command ran: its own exit code (201, the one staging failures use) is its result, and its
     * output carries neither the noise nor the record.
     */
    @Test
    void startUpNoiseOfAnySizeLeavesTheCommandsExitAndOutputAlone() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        b.noiseBytes = 3 * LaunchRecordStream.WINDOW;
        ExecResult r = within(b.start(ExecRequest.of("echo out; echo err >&2; exit 201")));
        assertEquals(201, r.exitCode());
        assertEquals("out\n", r.stdout().text());
        assertEquals("err\n", r.stderr().text());
    }

    /**
     * The pool is bounded: a few threads per exec the environment may run, and the pumps of the
     * finished execs whose background jobs it keeps; past that a task is refused (the exec with it,
     * clearly), while what must run for a command that runs still gets a thread of its own.
     */
    @Test
    void thePoolIsBoundedAndWhatMustRunStillRuns() throws Exception {
        Workers w = new Workers("bounded");
        CountDownLatch hold = new CountDownLatch(1);
        try {
            int bound = LiveExecs.MAX_LIVE * 5 + Workers.SPARE;
            for (int i = 0; i < bound; i++) {
                assertTrue(w.tryExecute(() -> awaitQuietly(hold)), "task " + i + " of " + bound + " refused");
            }
            assertFalse(w.tryExecute(() -> { }), "the pool took more than its bound");
            CountDownLatch ran = new CountDownLatch(1);
            w.runAsync(ran::countDown);
            assertTrue(ran.await(HANG.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS), "a kill or clean-up did not run");
        } finally {
            hold.countDown();
            w.shutdown();
        }
    }

    private static void awaitQuietly(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
