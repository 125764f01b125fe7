package dev.airlock.exec;

import dev.airlock.AirlockException;
import dev.airlock.Capabilities;
import dev.airlock.BackendException;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.StagingException;
import dev.airlock.StdinMode;
import dev.airlock.WriteOptions;
import dev.airlock.event.AuditEvent;
import dev.airlock.event.ExecListener;
import dev.airlock.event.ExecState;
import dev.airlock.event.ExecTransition;
import dev.airlock.exec.HostBackend.Fault;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The exec run ({@link ExecRun}: one exec's flow from staging to its result) against the exec
 * core's defects (issue 11), each driven through the real core on host processes with a
 * backend that stalls, fails or loses a hook on request. Bounds in awaits detect hangs (a result
 * that never comes); they are generous and assert nothing about speed.
 */
class ExecRunTest {
    /** Far above the stop bound (kill grace plus slack, under a second here): only a hang exceeds it. */
    private static final Duration HANG = Duration.ofSeconds(8);

    @TempDir
    Path dir;

    private final List<ExecTransition> seen = new CopyOnWriteArrayList<>();
    private final List<HostBackend> opened = new ArrayList<>();
    /** Runs on the thread that made each user exec's transition: a test parks one here to force an ordering. */
    private volatile java.util.function.Consumer<ExecTransition> onTransition = t -> { };

    private final ExecListener listener = new ExecListener() {
        @Override
        public void onTransition(ExecTransition t) {
            if (!t.internal()) {
                seen.add(t);
                onTransition.accept(t);
            }
        }

        @Override
        public void onEvent(AuditEvent e) {
        }
    };

    private HostBackend open(StdinMode mode, boolean nativeEnv, String... more) {
        HostBackend b = new HostBackend(HostBackend.settings(dir, more), mode, nativeEnv, List.of(listener));
        opened.add(b);
        return b;
    }

    private HostBackend open(String... more) {
        return open(StdinMode.PAYLOAD, false, more);
    }

    @AfterEach
    void cleanUp() {
        for (HostBackend b : opened) {
            b.release.countDown();
            b.env.close();
            b.launched.forEach(Process::destroyForcibly);
        }
    }

    private List<ExecState> ends() {
        return seen.stream().map(ExecTransition::to).filter(ExecState::isTerminal).toList();
    }

    private static List<Path> staged(HostBackend b) throws IOException {
        return b.stagedLeft();
    }

    private static ExecResult within(Execution e) throws InterruptedException {
        return HostBackend.within(e);
    }

    /** The audit event of an exec is out before its caller has the result: a close right after never loses it. */
    @Test
    void theExecEventIsOutBeforeTheCallerHasTheResult() {
        List<String> events = new CopyOnWriteArrayList<>();
        ExecListener slow = new ExecListener() {
            @Override
            public void onTransition(ExecTransition t) {
            }

            @Override
            public void onEvent(AuditEvent e) {
                if (e.type().equals("exec")) {
                    try {
                        Thread.sleep(300); // a listener that takes its time: the caller must not overtake it
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                    }
                    events.add(e.type() + " " + e.fields().get("exit"));
                }
            }
        };
        HostBackend b = new HostBackend(HostBackend.settings(dir), StdinMode.PAYLOAD, false, List.of(slow));
        opened.add(b);
        assertEquals(3, b.env.exec(ExecRequest.of("exit 3")).exitCode());
        assertEquals(List.of("exec 3"), events, "the event came after the caller had its result");
    }

    // ---- 1. a timeout or cancel bounds staging and launch

    @Test
    void timeoutEndsAnExecWhoseStagingIsStuck() throws Exception {
        HostBackend b = open();
        b.stage = Fault.STALL_UNINTERRUPTIBLY;
        Execution e = b.start(ExecRequest.builder("echo ran").stdin(Payload.ofUtf8("x")).timeout(Duration.ofMillis(200)).build());
        ExecResult r = within(e);
        assertTrue(r.timedOut());
        assertEquals(124, r.exitCode());
        assertEquals(List.of(ExecState.CANCELLED), ends());
    }

    @Test
    void cancelReturnsAndEndsAnExecWhoseStagingIsStuck() throws Exception {
        HostBackend b = open();
        b.stage = Fault.STALL_UNINTERRUPTIBLY;
        Execution e = b.start(ExecRequest.builder("echo ran").stdin(Payload.ofUtf8("x")).build());
        HostBackend.await(b.stalled);
        Thread canceller = new Thread(e::cancel);
        canceller.start();
        canceller.join(HANG.toMillis());
        assertFalse(canceller.isAlive(), "cancel() blocked on a stuck upload");
        assertTrue(e.isDone(), "cancel() returned before the exec had its result");
        assertTrue(within(e).cancelled());
    }

    /** A cancel of an exec stuck in an upload that can be interrupted interrupts it, so the flow ends too. */
    @Test
    void cancelInterruptsAStagingThatCanBeInterrupted() throws Exception {
        HostBackend b = open();
        b.stage = Fault.STALL;
        Execution e = b.start(ExecRequest.builder("echo ran").stdin(Payload.ofUtf8("x")).build());
        HostBackend.await(b.stalled);
        e.cancel();
        assertTrue(within(e).cancelled());
        assertEquals(List.of("stage"), b.interrupted, "the stuck upload was left running");
    }

    /** With airlock.cancel=sandbox, cancelling an exec that never got past staging is a cancel that stopped something. */
    @Test
    void aSandboxCancelOfAnExecStuckInStagingStopsTheSandbox() throws Exception {
        HostBackend b = open("airlock.cancel", "sandbox");
        b.stage = Fault.STALL;
        Execution e = b.start(ExecRequest.builder("echo ran").stdin(Payload.ofUtf8("x")).build());
        HostBackend.await(b.stalled);
        e.cancel();
        assertTrue(within(e).cancelled());
        long until = System.nanoTime() + HANG.toNanos();
        while (b.stops.get() == 0) {
            assertTrue(System.nanoTime() < until, "the sandbox-wide cancel never stopped the sandbox");
            Thread.sleep(10);
        }
        assertEquals(1, b.stops.get());
    }

    @Test
    void timeoutEndsAnExecWhoseLaunchIsStuck() throws Exception {
        HostBackend b = open();
        b.launch = Fault.STALL_UNINTERRUPTIBLY;
        Execution e = b.start(ExecRequest.builder("echo ran").timeout(Duration.ofMillis(200)).build());
        ExecResult r = within(e);
        assertTrue(r.timedOut());
        assertEquals(List.of(ExecState.DONE), ends());
    }

    /**
     * Close stops the live execs together: each stop of an exec stuck in staging waits out the stop
     * bound, so stopping 20 one after another takes 20 stop bounds, and together about one. The
     * bound allowed, half the serial time, is far from both.
     */
    @Test
    void closeIsBoundedWhenEveryExecIsStuckInStaging() throws Exception {
        HostBackend b = open();
        b.stage = Fault.STALL_UNINTERRUPTIBLY;
        int stuck = 20;
        List<Execution> es = new ArrayList<>();
        for (int i = 0; i < stuck; i++) {
            es.add(b.start(ExecRequest.builder("echo ran").stdin(Payload.ofUtf8("x")).build()));
        }
        long until = System.nanoTime() + HANG.toNanos();
        while (b.stalls.get() < stuck) {
            assertTrue(System.nanoTime() < until, "only " + b.stalls.get() + " execs reached staging");
            Thread.sleep(10);
        }
        Duration serial = b.env.config().stopBound().multipliedBy(stuck);
        Thread closer = new Thread(b.env::close);
        closer.start();
        closer.join(serial.dividedBy(2).toMillis());
        assertFalse(closer.isAlive(), "close() stopped the stuck execs one after another (" + serial + " in all)");
        for (Execution e : es) {
            assertTrue(within(e).cancelled());
        }
    }

    // ---- 2. failed execs end, and cancelling them does nothing

    @Test
    void aLaunchFailureEndsFailedAndItsCancelNeverStopsTheSandbox() throws Exception {
        HostBackend b = open("airlock.cancel", "sandbox");
        b.launch = Fault.FAIL;
        Execution e = b.start(ExecRequest.of("echo ran"));
        BackendException x = assertThrows(BackendException.class, e::await);
        assertTrue(x.getMessage().contains("could not start"), x.getMessage());
        e.cancel(); // the caller's clean-up
        assertEquals(0, b.stops.get(), "cancelling a failed exec stopped the sandbox");
        assertEquals(List.of(ExecState.FAILED), ends());
        b.launch = Fault.NONE;
        assertEquals("ok\n", b.exec(ExecRequest.of("echo ok")).stdout().text(), "the environment still works");
    }

    @Test
    void aStagingErrorEndsFailedAndLeavesNothingStaged() throws Exception {
        HostBackend b = open();
        b.stage = Fault.FAIL;
        Execution e = b.start(ExecRequest.builder("echo ran").stdin(Payload.ofUtf8("x")).build());
        assertThrows(StagingException.class, e::await);
        assertEquals(List.of(ExecState.FAILED), ends());
        assertEquals(List.of(), staged(b));
    }

    /** The env script went up, the stdin did not: the exec fails and the env script is removed too. */
    @Test
    void aStagingErrorAfterAFileWasStagedRemovesThatFile() throws Exception {
        HostBackend b = open();
        b.stagesBeforeFault = 1;
        b.stage = Fault.FAIL;
        Execution e = b.start(ExecRequest.builder("cat").stdin(Payload.ofUtf8("x")).build());
        assertThrows(StagingException.class, e::await);
        assertEquals(1, b.stagedPaths.size(), "the first file was staged: " + b.stagedPaths);
        assertEquals(List.of(ExecState.FAILED), ends());
        assertEquals(List.of(), staged(b), "a failed exec left what it had staged");
    }

    /**
     * Issue 33 defect 2: a removal hook that throws an Error or a checked exception it does not
     * declare (OkHttp's sneaky InterruptedException) killed the flow thread: no result, the slot
     * held, the other staged files left. The exec must still fail, once, and release both.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.MethodSource("throwsFromCleanUp")
    void aCleanUpHookThatThrowsAnythingStillEndsTheExec(Throwable thrown) throws Exception {
        HostBackend b = open();
        b.launch = Fault.FAIL;
        b.removeThrows.set(thrown);
        Execution e = b.start(ExecRequest.builder("cat").stdin(Payload.ofUtf8("x")).build());
        BackendException x = assertThrows(BackendException.class, () -> e.await(HANG), "no answer: the exec hung");
        assertTrue(x.getMessage().contains("could not start"), x.getMessage());
        assertEquals(List.of(ExecState.FAILED), ends());
        assertEquals(0, b.env.live().size(), "the failed exec still holds its slot");
        assertTrue(b.stagedPaths.size() >= 2, "the env script and the stdin were staged: " + b.stagedPaths);
        assertEquals(b.stagedPaths.size(), b.removedPaths.size(), "a removal that threw stopped the others: " + b.removedPaths);
        assertEquals(1, staged(b).size(), "only the file whose removal threw may stay: " + staged(b));
        b.launch = Fault.NONE;
        assertEquals("ok\n", b.exec(ExecRequest.of("echo ok")).stdout().text(), "the environment still works");
    }

    static List<Throwable> throwsFromCleanUp() {
        return List.of(new InterruptedException("sneaky, as OkHttp"), new java.util.concurrent.TimeoutException("sneaky"),
                new NoClassDefFoundError("an Error"), new StackOverflowError(),
                new java.io.InterruptedIOException("interrupted at its deadline, the thread still flagged"));
    }

    /** A cancel during staging returns once what was staged is removed, not later with await(). */
    @Test
    void stagedFilesAreGoneWhenACancelDuringStagingReturns() throws Exception {
        HostBackend b = open();
        b.stagesBeforeFault = 1;
        b.stage = Fault.STALL;
        Execution e = b.start(ExecRequest.builder("cat").stdin(Payload.ofUtf8("x")).build());
        HostBackend.await(b.stalled);
        assertFalse(staged(b).isEmpty(), "the env script was staged before the stall");
        e.cancel();
        assertEquals(List.of(), staged(b), "cancel() returned with staged files still on the target");
        assertTrue(within(e).cancelled());
    }

    @Test
    void aLostResponseEndsFailedAndIsNeverRunAgain() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        b.launch = Fault.LOSE;
        Path marker = dir.resolve("runs");
        Execution e = b.start(ExecRequest.of("echo x >> " + marker));
        AirlockException x = assertThrows(AirlockException.class, e::await);
        assertTrue(x.getMessage().contains("not run again"), x.getMessage());
        assertEquals(List.of(ExecState.FAILED), ends());
        assertEquals("x\n", Files.readString(marker));
    }

    /** A backend that knows why the end was lost (its sandbox ended) gives its own line, not "connection lost". */
    @Test
    void aLostEndWhoseSandboxEndedFailsWithTheBackendsOwnLine() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        b.lostReason = new dev.airlock.BackendUnavailableException("the sandbox sb-1 has ended; make a new one");
        b.launch = Fault.LOSE;
        AirlockException x = assertThrows(AirlockException.class, b.start(ExecRequest.of("true"))::await);
        assertEquals("the sandbox sb-1 has ended; make a new one", x.getMessage());
        assertEquals(List.of(ExecState.FAILED), ends());
        b.launch = Fault.NONE;
        b.script = Fault.LOSE; // the core's own scripts through the exec flow (here the file API's)
        AirlockException files = assertThrows(AirlockException.class, () -> b.env.files().stat(dir.toString()));
        assertEquals("the sandbox sb-1 has ended; make a new one", files.getMessage());
    }

    /** The open's own raw scripts (the probe) lost with a known reason: the open fails with that line. */
    @Test
    void anOpenWhoseSandboxEndedDuringItsProbeSaysSo() {
        AirlockException x = assertThrows(AirlockException.class, () -> new HostBackend(HostBackend.settings(dir.resolve("p")),
                Capabilities.pipe(), List.of(), false, b -> {
                    b.script = Fault.LOSE;
                    b.lostReason = new dev.airlock.BackendUnavailableException("the sandbox sb-2 has ended; make a new one");
                }).close());
        assertEquals("the sandbox sb-2 has ended; make a new one", x.getMessage());
        AirlockException unknown = assertThrows(AirlockException.class, () -> new HostBackend(HostBackend.settings(dir.resolve("q")),
                Capabilities.pipe(), List.of(), false, b -> b.script = Fault.LOSE).close());
        assertTrue(String.valueOf(unknown.getMessage()).contains("was lost while an internal script ran"), unknown.getMessage());
    }

    @Test
    void aDeniedCommandEndsFailed() throws Exception {
        HostBackend b = open("airlock.guard", "on");
        Execution e = b.start(ExecRequest.of("echo KEY > ~/.ssh/id_rsa"));
        assertThrows(dev.airlock.DeniedException.class, e::await);
        assertEquals(List.of(ExecState.FAILED), ends());
        e.cancel();
        assertEquals(List.of(ExecState.FAILED), ends(), "a cancel after the end changes nothing");
    }

    @Test
    void aKillBeforeThePrefixRanRemovesWhatWasStaged() throws Exception {
        HostBackend b = open();
        b.slowStart = 30;
        Execution e = b.start(ExecRequest.builder("cat").stdin(Payload.ofUtf8("x")).build());
        b.awaitLaunched();
        assertEquals(2, staged(b).size(), "the env script and the stdin are staged: " + staged(b));
        e.cancel();
        assertTrue(within(e).cancelled());
        assertEquals(List.of(), staged(b), "staged files outlived a kill before the command started");
    }

    /**
     * A cancel that lands after staging finished but before the commit point: the flow re-checks and
     * never dispatches (the flow is parked at its STAGED transition until the cancel was decided).
     */
    @Test
    void aCancelBetweenStagingAndDispatchNeverRunsTheCommand() throws Exception {
        HostBackend b = open();
        CountDownLatch parked = new CountDownLatch(1);
        CountDownLatch cancelled = new CountDownLatch(1);
        onTransition = t -> {
            if (t.to() == ExecState.STAGED) {
                parked.countDown();
                awaitUninterruptibly(cancelled);
            } else if (t.to() == ExecState.CANCELLED) {
                cancelled.countDown();
            }
        };
        Execution e = b.start(ExecRequest.builder("cat").stdin(Payload.ofUtf8("x")).build());
        HostBackend.await(parked);
        e.cancel();
        assertTrue(within(e).cancelled());
        assertEquals(List.of(ExecState.CANCELLED), ends());
        assertFalse(seen.stream().anyMatch(t -> t.to() == ExecState.DISPATCHED), "dispatched after a cancel: " + seen);
        b.env.close();
        assertEquals(List.of(), b.launched, "the command was launched after its cancel");
        assertEquals(List.of(), staged(b), "what was staged for it is gone");
    }

    private static void awaitUninterruptibly(CountDownLatch l) {
        boolean interrupted = false;
        long until = System.nanoTime() + HANG.toNanos();
        while (l.getCount() > 0 && System.nanoTime() < until) {
            try {
                l.await(10, TimeUnit.MILLISECONDS);
            } catch (InterruptedException x) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void finishedExecsLeaveRoomForMore() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        for (int i = 0; i <= LiveExecs.MAX_LIVE; i++) {
            assertEquals(0, b.exec(ExecRequest.of("true")).exitCode());
        }
    }

    @Test
    void aCallerHoldingTheBoundExactlyIsNeverRefusedForAnExecThatReturned() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        List<Execution> held = new ArrayList<>();
        for (int i = 0; i < LiveExecs.MAX_LIVE - 1; i++) {
            held.add(b.start(ExecRequest.of("sleep 30")));
        }
        // One place left: each exec takes it, returns, and the next starts at once.
        for (int i = 0; i < 200; i++) {
            assertEquals(0, b.exec(ExecRequest.of("true")).exitCode(), "round " + i);
        }
        held.forEach(Execution::cancel);
    }

    // ---- 3. a pump that meets a RuntimeException keeps draining

    @Test
    void aSinkThatThrowsFailsTheExecInsteadOfHangingIt() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        OutputStream bad = new OutputStream() {
            @Override
            public void write(int x) {
                throw new IllegalStateException("the caller's sink broke");
            }

            @Override
            public void write(byte[] buf, int off, int len) {
                throw new IllegalStateException("the caller's sink broke");
            }
        };
        Execution e = b.start(ExecRequest.builder("head -c 3000000 /dev/zero").output(bad, OutputStream.nullOutputStream()).build());
        Optional<ExecResult> r;
        try {
            r = e.await(HANG);
        } catch (BackendException x) {
            assertTrue(x.getMessage().contains("sink broke"), x.getMessage());
            return;
        }
        throw new AssertionError(r.isPresent() ? "a broken sink passed for success" : "the exec hung on a broken sink");
    }

    // ---- 4. kills are checked: never a recycled group, no KILL for a gone group

    @Test
    void aGroupWhoseLeaderIsNotTheLaunchedOneIsNeverSignalled() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        b.recycledIdentity = true;
        Execution e = b.start(ExecRequest.builder("sleep 30").timeout(Duration.ofMillis(500)).build());
        assertTrue(within(e).timedOut());
        b.env.close();
        assertEquals(List.of(), b.signals, "signalled a group that is no longer the command's");
        assertTrue(HostBackend.alive(b.launched.get(0).pid()), "the other owner's process was killed");
    }

    @Test
    void noKillFollowsTermWhenTheGroupIsGone() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        Execution e = b.start(ExecRequest.builder("sleep 30").timeout(Duration.ofMillis(500)).build());
        assertTrue(within(e).timedOut());
        b.env.close();
        assertEquals(1, b.signals.size(), "signals: " + b.signals);
        assertTrue(b.signals.get(0).startsWith("TERM"), "signals: " + b.signals);
    }

    // ---- 5. close racing a slow launch

    @Test
    void closeDuringASlowLaunchKillsTheCommandAndNeverSaysItDidNotStart() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        b.launch = Fault.STALL_UNINTERRUPTIBLY;
        Execution e = b.start(ExecRequest.of("sleep 30"));
        HostBackend.await(b.stalled);
        Thread closer = new Thread(b.env::close);
        closer.start();
        ExecResult r;
        try {
            r = within(e);
        } catch (EnvironmentClosedException x) {
            throw new AssertionError("a dispatched exec was reported as never started: " + x.getMessage());
        }
        assertTrue(r.cancelled());
        b.release.countDown();
        closer.join(HANG.toMillis());
        assertFalse(closer.isAlive());
        long until = System.nanoTime() + HANG.toNanos();
        while (b.launched.isEmpty() || HostBackend.alive(b.launched.get(0).pid())) {
            assertTrue(System.nanoTime() < until, "the command launched after close was neither killed nor tracked");
            Thread.sleep(20);
        }
    }

    // ---- 6. the staged env is sourced after the staged files are removed

    @Test
    void aRequestPathWithoutRmStillRunsOnAStagedEnvBackend() throws Exception {
        HostBackend b = open();
        ExecResult r = b.exec(ExecRequest.builder("read -r x; echo \"$x $FOO\"").env("PATH", "/nonexistent")
                .env("FOO", "bar").stdin(Payload.ofUtf8("in\n")).build());
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertEquals("in bar\n", r.stdout().text());
        assertEquals(List.of(), staged(b));
    }

    // ---- 7. the shutdown hook waits for a close that is running

    @Test
    void theShutdownHookWaitsForARunningClose() throws Exception {
        HostBackend b = open();
        b.stop = Fault.STALL;
        Thread closer = new Thread(b.env::close);
        closer.start();
        HostBackend.await(b.stalled);
        Thread hook = new Thread(b::closeFromHook);
        hook.start();
        hook.join(500);
        assertTrue(hook.isAlive(), "the shutdown hook returned while the sandbox was still being stopped");
        b.release.countDown();
        hook.join(HANG.toMillis());
        closer.join(HANG.toMillis());
        assertFalse(hook.isAlive());
        assertEquals(1, b.stops.get());
    }

    // ---- 8. bounded

    /**
     * The execs that fill the bound are held in their launch (no process is started for them):
     * each is live until it ends, and when let go their launches fail, so nothing runs.
     */
    @Test
    void execsBeyondTheBoundAreRefusedWithAClearError() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        b.launch = Fault.STALL_THEN_FAIL;
        List<Execution> es = new ArrayList<>();
        for (int i = 0; i < LiveExecs.MAX_LIVE; i++) {
            es.add(b.start(ExecRequest.of("sleep 30")));
        }
        BackendException x = assertThrows(BackendException.class, () -> b.start(ExecRequest.of("echo one too many")));
        assertTrue(x.getMessage().contains("wait for some to finish"), x.getMessage());
        b.release.countDown();
        for (Execution e : es) {
            assertThrows(BackendException.class, e::await, "a held launch that failed is the exec's error");
        }
    }

    // ---- 9. the cause is decided with the state

    @Test
    void aCancelAfterTheCommandExitedChangesNothing() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true, "airlock.cancel", "sandbox");
        CountDownLatch flushing = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        OutputStream slowSink = new OutputStream() {
            @Override
            public void write(int x) {
            }

            @Override
            public void flush() {
                flushing.countDown();
                try {
                    go.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        Execution e = b.start(ExecRequest.builder("echo done").output(slowSink, OutputStream.nullOutputStream()).build());
        HostBackend.await(flushing); // the command has exited; its output is being handed over
        e.cancel();
        go.countDown();
        ExecResult r = within(e);
        assertEquals(0, r.exitCode());
        assertFalse(r.cancelled(), "a finished command reported as cancelled");
        assertEquals(0, b.stops.get(), "a cancel of a finished exec stopped the sandbox");
        assertEquals(List.of(ExecState.DONE), ends());
    }

    // ---- 10. the exit status cannot be forged; startup noise is not output

    @Test
    void startupNoiseIsDroppedAndTheCommandsOwnExit201IsItsOwn() throws Exception {
        HostBackend b = open();
        b.noise = "Welcome to the host!\\n";
        ExecResult r = b.exec(ExecRequest.builder("cat; printf 'e\\000' >&2; exit 201").stdin(Payload.ofUtf8("in")).build());
        assertEquals(201, r.exitCode());
        assertEquals("in", r.stdout().text());
        assertArrayEquals(new byte[] {'e', 0}, r.stderr().bytes(), "startup noise on stderr was taken for the command's");
    }

    /** A staging line that fails still says why, after the login shell's noise on the same stream. */
    @Test
    void aStagingFailureSaysWhyDespiteStartupNoise() throws Exception {
        HostBackend b = open();
        b.noise = "Welcome to the host!\nsecond banner line\n";
        ExecRequest bad = ExecRequest.builder("true").cwd(dir.resolve("no-such-dir").toString()).build();
        ExecResult r = b.exec(bad);
        assertEquals(126, r.exitCode());
        String err = r.stderr().text();
        assertTrue(err.endsWith("no-such-dir: No such file or directory\n") || err.contains("can't cd"), err);
    }

    /**
     * The same noise before Airlock's own scripts: the group check after a timeout's TERM must not
     * read "Welcome...alive" as gone, or a command ignoring TERM is never sent its KILL.
     */
    @Test
    void startupNoiseBeforeAirlocksOwnScriptsStillLetsATimeoutKillACommandIgnoringTerm() throws Exception {
        HostBackend b = open();
        b.noise = "Welcome to the host!\\n";
        Path pid = dir.resolve("ignorer.pid");
        ExecResult r = b.exec(ExecRequest.builder("trap '' TERM; sleep 300 & echo $! > '" + pid + "'; wait")
                .timeout(Duration.ofSeconds(1)).build());
        assertEquals(124, r.exitCode());
        long child = Long.parseLong(Files.readString(pid).strip());
        for (int i = 0; i < 500 && HostBackend.alive(child); i++) {
            Thread.sleep(20);
        }
        assertFalse(HostBackend.alive(child), "the command that ignored TERM was never killed");
    }

    @Test
    void aForgedRecordAfterTheRealOneIsOutput() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        String fake = "\n@airlock:00000000000000000000000000000000:1:2:ok\n";
        ExecResult r = b.exec(ExecRequest.of("printf '" + fake.replace("\n", "\\n") + "'; exit 3"));
        assertEquals(3, r.exitCode());
        assertEquals(fake, r.stdout().text());
    }

    // ---- 11. PAYLOAD file writes are not stdin; output outlives close

    @Test
    void fileWritesOnAPayloadBackendAreNotCappedByTheStdinLimit() throws Exception {
        HostBackend b = open("airlock.stdin.max-staged-bytes", "1000");
        byte[] data = new byte[5000];
        String f = dir.resolve("big.bin").toString();
        InputStream unknownLength = new ByteArrayInputStream(data);
        b.env.files().write(f, Payload.ofStream(unknownLength), WriteOptions.defaults());
        assertArrayEquals(data, Files.readAllBytes(Path.of(f)));
    }

    @Test
    void outputOverTheHeapPartStaysReadableAfterClose() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        ExecResult r = b.exec(ExecRequest.of("head -c 2000000 /dev/zero"));
        b.env.close();
        assertEquals(2_000_000, r.stdout().size());
        assertEquals(2_000_000, r.stdout().bytes().length);
        r.close();
        assertThrows(java.io.UncheckedIOException.class, () -> r.stdout().bytes(), "closing the result deletes its spill file");
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
