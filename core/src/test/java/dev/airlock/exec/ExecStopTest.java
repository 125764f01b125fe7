package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import dev.airlock.exec.HostBackend.Fault;
import dev.airlock.session.Session;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a stop does beyond the exec it ends: a sandbox-wide cancel stops the sandbox once, an exec
 * whose kill is stuck is let go at the stop bound, a launch that fails after a cancel is
 * cancelled; and which staged files are removed, and that a session hears of each end before its
 * caller does.
 */
class ExecStopTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();


    private HostBackend open(StdinMode mode, String... more) {
        HostBackend b = new HostBackend(HostBackend.settings(dir, more), mode, mode == StdinMode.PIPE, List.of());
        opened.add(b);
        return b;
    }

    private static void eventually(String what, BooleanSupplier done) throws InterruptedException {
        long until = System.nanoTime() + HostBackend.HANG.toNanos();
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < until, what);
            Thread.sleep(10);
        }
    }

    @Test
    void aSandboxCancelOfARunningCommandStopsTheSandboxOnce() throws Exception {
        HostBackend b = open(StdinMode.PIPE, "airlock.cancel", "sandbox");
        Execution e = b.start(ExecRequest.of("sleep 30"));
        b.awaitLaunched();
        e.cancel();
        assertTrue(HostBackend.within(e).cancelled());
        eventually("the sandbox-wide cancel never stopped the sandbox", () -> b.stops.get() > 0);
        e.cancel();
        assertEquals(1, b.stops.get(), "the sandbox was stopped more than once");
    }

    /**
     * A kill that never answers: the caller has the result at the stop bound, and the flow waiting
     * on the command is let go then too, so the exec gives back its slot among the live ones.
     */
    @Test
    void anExecWhoseKillIsStuckGivesBackItsSlotAtTheStopBound() throws Exception {
        HostBackend b = open(StdinMode.PIPE);
        b.kill = Fault.STALL_UNINTERRUPTIBLY;
        ExecResult r = HostBackend.within(b.start(ExecRequest.builder("sleep 30").timeout(java.time.Duration.ofMillis(300)).build()));
        assertTrue(r.timedOut());
        eventually("an exec given up on at the stop bound still holds its slot", () -> b.env.live().size() == 0);
    }

    /**
     * A kill slower than the stop bound (several remote calls on a cloud backend): the caller's
     * result still holds the output the command wrote before its timeout, on both streams.
     */
    @Test
    void aSlowKillKeepsTheOutputCapturedSoFar() throws Exception {
        HostBackend b = open(StdinMode.PIPE);
        b.kill = Fault.STALL_UNINTERRUPTIBLY;
        // The timeout leaves the pumps ample time to take the output first, on a loaded machine too.
        ExecResult r = HostBackend.within(b.start(ExecRequest.builder("printf partial; printf err-partial >&2; sleep 30")
                .timeout(java.time.Duration.ofSeconds(2)).build()));
        assertTrue(r.timedOut(), r.toString());
        assertEquals("partial", r.stdout().text(), "the output captured before the timeout was dropped");
        assertEquals("err-partial", r.stderr().text(), "the stderr captured before the timeout was dropped");
    }

    /**
     * Execs whose staging is stuck in the caller's own stdin stream, which ignores interrupts:
     * each gets its cancelled result, and gives back its place among the live execs with it, so a
     * full set of them does not refuse the next exec.
     */
    @Test
    void execsStuckInTheCallersStreamGiveBackTheirPlaces() throws Exception {
        HostBackend b = new HostBackend(HostBackend.settings(dir), StdinMode.PAYLOAD, true, List.of());
        opened.add(b);
        CountDownLatch open = new CountDownLatch(1);
        CountDownLatch reading = new CountDownLatch(LiveExecs.MAX_LIVE);
        List<Execution> stuck = new ArrayList<>();
        try {
            for (int i = 0; i < LiveExecs.MAX_LIVE; i++) {
                InputStream source = new InputStream() {
                    @Override
                    public int read() {
                        reading.countDown();
                        boolean interrupted = false;
                        while (true) {
                            try {
                                open.await();
                                break;
                            } catch (InterruptedException e) {
                                interrupted = true; // ignored, as a blocking read of a socket or pipe does
                            }
                        }
                        if (interrupted) {
                            Thread.currentThread().interrupt();
                        }
                        return -1;
                    }
                };
                stuck.add(b.start(ExecRequest.builder("cat").stdin(Payload.ofStream(source)).build()));
            }
            HostBackend.await(reading); // every one is staging, stuck in its caller's stream
            List<Thread> cancels = new ArrayList<>();
            for (Execution e : stuck) {
                Thread t = new Thread(e::cancel); // each waits out the stop bound: in parallel
                t.start();
                cancels.add(t);
            }
            for (Thread t : cancels) {
                t.join();
            }
            for (Execution e : stuck) {
                assertTrue(HostBackend.within(e).cancelled());
            }
            ExecResult r = b.exec(ExecRequest.of("echo next"));
            assertEquals("next\n", r.stdout().text());
        } finally {
            open.countDown();
        }
    }

    /** A launch that fails once the caller cancelled did not start anything the caller asked to keep: it is cancelled, not failed. */
    @Test
    void aLaunchThatFailsAfterACancelIsCancelled() throws Exception {
        HostBackend b = open(StdinMode.PIPE);
        b.launch = Fault.STALL_THEN_FAIL;
        Execution e = b.start(ExecRequest.of("echo ran"));
        HostBackend.await(b.stalled);
        e.cancel(); // dispatched: the kill waits for the launch to return
        b.release.countDown(); // well within the stop bound, so the flow's own answer is the result
        ExecResult r = HostBackend.within(e);
        assertTrue(r.cancelled(), "a launch failing after the cancel was reported as: " + r);
    }

    /**
     * The caller cancelled; while the kill ran, the caller's stdin source broke too: once the
     * command is gone the cancel is the answer, given then, not held until the stop bound (long here).
     */
    @Test
    void aCancelledExecWhoseStdinSourceBrokeDuringTheKillIsAnsweredWhenItEnded() throws Exception {
        HostBackend b = open(StdinMode.PIPE, "airlock.kill.slack", "20s");
        b.kill = Fault.STALL_UNINTERRUPTIBLY;
        CountDownLatch waiting = new CountDownLatch(1);
        CountDownLatch breakNow = new CountDownLatch(1);
        CountDownLatch broke = new CountDownLatch(1);
        InputStream source = new InputStream() {
            private boolean first = true;

            @Override
            public int read() {
                throw new UnsupportedOperationException();
            }

            @Override
            public int read(byte[] buf, int off, int len) throws IOException {
                if (first) {
                    first = false;
                    buf[off] = 'x';
                    return 1;
                }
                waiting.countDown();
                try {
                    breakNow.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                broke.countDown();
                throw new IOException("the source broke");
            }
        };
        Execution e = b.start(ExecRequest.builder("cat > /dev/null").stdin(Payload.ofStream(source)).build());
        HostBackend.await(waiting);
        e.cancel();
        HostBackend.await(b.stalled); // the kill is on its way, held
        breakNow.countDown();
        HostBackend.await(broke);
        b.release.countDown();
        assertTrue(HostBackend.within(e).cancelled());
    }

    /** A caller whose thread is interrupted while cancel() waits keeps its interrupt; the exec still ends cancelled. */
    @Test
    void aCancelFromAnInterruptedThreadEndsTheExecAndKeepsTheInterrupt() throws Exception {
        HostBackend b = open(StdinMode.PAYLOAD);
        b.stage = Fault.STALL_UNINTERRUPTIBLY;
        Execution e = b.start(ExecRequest.builder("echo ran").stdin(Payload.ofUtf8("x")).build());
        HostBackend.await(b.stalled);
        AtomicBoolean keptInterrupt = new AtomicBoolean();
        Thread caller = new Thread(() -> {
            Thread.currentThread().interrupt();
            e.cancel();
            keptInterrupt.set(Thread.currentThread().isInterrupted());
        });
        caller.start();
        caller.join(HostBackend.HANG.toMillis());
        assertTrue(!caller.isAlive(), "cancel() blocked on a stuck upload");
        assertTrue(keptInterrupt.get(), "cancel() swallowed its caller's interrupt");
        assertTrue(e.isDone(), "cancel() returned before the exec had its result");
        assertTrue(HostBackend.within(e).cancelled());
    }

    /** The command's prefix removes its staged files itself once it runs: the core asks for no second removal. */
    @Test
    void aStartedCommandsStagedFilesAreNotRemovedAgain() throws Exception {
        HostBackend b = open(StdinMode.PAYLOAD);
        ExecResult r = b.exec(ExecRequest.builder("cat").stdin(Payload.ofUtf8("staged")).build());
        assertEquals("staged", r.stdout().text());
        assertTrue(!b.stagedPaths.isEmpty(), "nothing was staged");
        assertEquals(List.of(), b.removedPaths, "removals of files the command's prefix had removed");
        assertEquals(List.of(), b.stagedLeft());
    }

    /** The session hears of the end before the caller has it: a next exec that may not wait starts at once. */
    @Test
    void aSessionsNextExecStartsAsSoonAsThePreviousReturned() {
        HostBackend b = open(StdinMode.PIPE, "airlock.session.wait", "false");
        try (Session s = b.env.session()) {
            for (int i = 0; i < 3; i++) {
                assertEquals("ran\n", s.exec(ExecRequest.of("echo ran")).stdout().text());
            }
        }
    }

    @Test
    void aSessionsNextExecStartsAsSoonAsAFailedOneReturned() {
        HostBackend b = open(StdinMode.PIPE, "airlock.session.wait", "false", "airlock.guard", "on");
        try (Session s = b.env.session()) {
            assertThrows(dev.airlock.DeniedException.class, () -> s.exec(ExecRequest.of("echo KEY > ~/.ssh/id_rsa")));
            assertEquals("ran\n", s.exec(ExecRequest.of("echo ran")).stdout().text());
        }
    }
    /**
     * A session's timed-out command whose kill is slow: the caller has the timeout at the stop
     * bound, but the session's next command waits until the previous one's shell is gone.
     */
    @Test
    void aSessionsNextExecWaitsForThePreviousShellOfASlowKill() throws Exception {
        HostBackend b = open(StdinMode.PIPE);
        b.kill = Fault.STALL_UNINTERRUPTIBLY;
        try (Session s = b.env.session()) {
            ExecResult first = s.exec(ExecRequest.builder("sleep 30").timeout(java.time.Duration.ofMillis(300)).build());
            assertTrue(first.timedOut(), first.toString());
            long shell = b.launched.get(0).pid();
            String[] next = new String[1];
            Thread t = new Thread(() -> next[0] = s.exec(ExecRequest.of(
                    "if [ -d /proc/" + shell + " ] && ! grep -q '^State:.*Z' /proc/" + shell + "/status; then echo alive; else echo gone; fi"))
                    .stdout().text());
            t.start();
            t.join(1000); // a next exec that did not wait has run by now
            b.release.countDown(); // the kill goes on
            t.join(60_000); // the kill, then the next exec, on a loaded machine (PIT's coverage run at load 25 took past 8 s)
            assertEquals("gone\n", next[0], "the session's next command ran while the previous shell still ran");
        }
    }
    /**
     * A backend whose kill is several remote calls (500 ms a step here) and says so: the stop
     * waits for the kill, so the result comes with the command's tree gone and its output
     * downloaded, on a FILES backend too (where the watchdog has none to give).
     */
    @Test
    void aBackendThatDeclaresASlowKillGetsItsWholeStop() throws Exception {
        HostBackend b = new HostBackend(HostBackend.settings(dir),
                dev.airlock.Capabilities.pipe().withOutputTransport(dev.airlock.OutputTransport.FILES), List.of(), false,
                backend -> backend.killStepCost = java.time.Duration.ofSeconds(1));
        opened.add(b);
        b.killStepMillis = 500; // two steps outlast the stop bound this backend would have without its declaration
        // The timeout leaves the command ample time to print first, on a loaded machine too (at 300 ms a
        // build beside it once had the timeout come before printf ran: nothing to keep).
        ExecResult r = HostBackend.within(b.start(ExecRequest.builder("printf partial; sleep 30")
                .timeout(java.time.Duration.ofSeconds(3)).build()));
        assertTrue(r.timedOut(), r.toString());
        assertEquals("partial", r.stdout().text(), "the output of a timed-out command was lost to a slow kill");
        assertTrue(!HostBackend.alive(b.launched.get(0).pid()), "the result came while the timed-out command still ran");
    }
}
