package dev.airlock.exec;

import dev.airlock.AirlockException;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import dev.airlock.event.AuditEvent;
import dev.airlock.event.ExecListener;
import dev.airlock.event.ExecState;
import dev.airlock.event.ExecTransition;
import dev.airlock.exec.HostBackend.Fault;
import dev.airlock.session.Session;
import net.jqwik.api.AfterFailureMode;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.ActionChainArbitrary;
import net.jqwik.api.state.Transformer;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A stateful property of the exec core: chains of actions (runs, long execs, cancels, timeouts in
 * staging and while running, launch failures, clean-up hooks that throw, slow kills, session execs,
 * close) against the real core on host processes, each action checking what must hold the moment
 * it returns: the result's flags and exit code, the output captured so far, no staged file left,
 * no process of a stopped exec left, no launch of an exec cancelled before dispatch (read from the
 * backend's launches, not from the state machine's transitions), and after every action that no
 * ended exec holds a slot. jqwik shrinks a failing chain to a short one; the seed is fixed, so a
 * failure reproduces and PIT sees the same chains every time.
 *
 * <p>Bounds are generous and only detect hangs: nothing here depends on an idle machine.
 */
class ExecCorePropertyTest {
    private static final Duration HANG = HostBackend.HANG;
    /** Short enough to keep chains quick, long enough that a command's shell has started under load. */
    private static final Duration TIMEOUT = Duration.ofMillis(300);
    /** A kill step (a group read, a signal) as slow as a remote call's: the kill outlasts the stop bound. */
    private static final long SLOW_KILL_STEP_MS = 300;

    private final List<Sandbox> opened = new CopyOnWriteArrayList<>();

    @Property(seed = "20261206", afterFailure = AfterFailureMode.SAMPLE_FIRST)
    void everyExecEndsAsItShouldAndNothingOutlivesIt(@ForAll("chains") ActionChain<Sandbox> chain) {
        chain.withInvariant("no ended exec holds a slot", Sandbox::slotsAreReleased)
                .withInvariant("an exec ends once and stays ended", Sandbox::eachExecEndsOnce)
                .withInvariant("nothing cancelled before dispatch was launched", Sandbox::nothingCancelledWasLaunched)
                .run()
                .closeAndCheck();
    }

    @AfterTry
    void releaseAndClose() {
        for (Sandbox s : opened) {
            HostBackend.closeAll(List.of(s.b));
        }
        opened.clear();
    }

    @Provide
    Arbitrary<ActionChain<Sandbox>> chains() {
        return Arbitraries.of(Transport.values()).flatMap(this::chains);
    }

    private ActionChainArbitrary<Sandbox> chains(Transport transport) {
        ActionChainArbitrary<Sandbox> chains = ActionChain.startWith(() -> open(transport))
                .withAction(3, whileOpen(Arbitraries.of(true, false).map(stdin ->
                        Transformer.mutate("run" + (stdin ? " with stdin" : ""), s -> s.run(stdin)))))
                .withAction(3, whileOpen(Arbitraries.of(true, false).map(stdin ->
                        Transformer.mutate("start a long exec" + (stdin ? " with stdin" : ""), s -> s.startLong(stdin)))))
                .withAction(3, new CancelOne())
                .withAction(2, whileOpen(Arbitraries.of(true, false).map(inStaging ->
                        Transformer.mutate("time out " + (inStaging ? "in staging" : "while running"), s -> s.timeOut(inStaging)))))
                .withAction(whileOpen(Arbitraries.just(Transformer.mutate("cancel while staging", Sandbox::cancelWhileStaging))))
                .withAction(whileOpen(Arbitraries.of(RemovalFailure.values()).map(f ->
                        Transformer.mutate("launch fails, removal " + f, s -> s.launchFails(f)))))
                .withAction(whileOpen(Arbitraries.just(Transformer.mutate("toggle slow kills", Sandbox::toggleSlowKills))))
                .withAction(2, whileOpen(Arbitraries.of(true, false).map(timesOut ->
                        Transformer.mutate("session exec" + (timesOut ? " that times out" : ""), s -> s.sessionExec(timesOut)))))
                .withAction(Action.<Sandbox>when(s -> !s.closed).describeAs("close").justMutate(Sandbox::close))
                .withAction(Action.<Sandbox>when(s -> s.closed).describeAs("start after close").justMutate(Sandbox::startAfterClose));
        return chains.withMaxTransformations(7);
    }

    /** How the test backend's transport behaves, as real ones do. */
    enum Transport {
        /** Host processes: the group led by the command's shell, its start time known. */
        HOST,
        /** A sandbox API's: the group led by a wrapper process, no start time reported. */
        WRAPPED
    }

    /** An action that needs the environment open. */
    private static Action.Independent<Sandbox> whileOpen(Arbitrary<Transformer<Sandbox>> t) {
        return new Action.Independent<>() {
            @Override
            public boolean precondition(Sandbox s) {
                return !s.closed;
            }

            @Override
            public Arbitrary<Transformer<Sandbox>> transformer() {
                return t;
            }
        };
    }

    /** Cancels one of the long execs that run. */
    private static final class CancelOne implements Action.Dependent<Sandbox> {
        @Override
        public boolean precondition(Sandbox s) {
            return !s.live.isEmpty();
        }

        @Override
        public Arbitrary<Transformer<Sandbox>> transformer(Sandbox s) {
            return Arbitraries.integers().between(0, s.live.size() - 1)
                    .map(i -> Transformer.mutate("cancel long exec #" + i, x -> x.cancel(i)));
        }
    }

    /** How the removal of the staged files fails after a failed launch: as hooks have been seen to. */
    enum RemovalFailure {
        NONE,
        /** An Error out of the hook. */
        ERROR,
        /** OkHttp's InterruptedException, thrown undeclared. */
        SNEAKY_INTERRUPT,
        /** Interrupted at its deadline, its thread left flagged. */
        DEADLINE,
        /** Hangs until interrupted (at the kill bound, which bounds every clean-up step). */
        STALL
    }

    private Sandbox open(Transport transport) {
        try {
            Sandbox s = new Sandbox(Files.createTempDirectory("airlock-prop-"), transport);
            opened.add(s);
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One environment on host processes, and what the chain so far has done to it. */
    static final class Sandbox {
        final HostBackend b;
        final Path dir;
        /** Long execs running, their command started (their staged files consumed), in start order. */
        final List<Running> live = new ArrayList<>();
        /** Execs cancelled or timed out before dispatch, by tag: never to be launched. */
        final Set<String> neverLaunched = new HashSet<>();
        /** Staged files a clean-up hook failed to remove (it threw): left to close's removal of the private dir. */
        final Set<Path> leftByFailedRemoval = new HashSet<>();
        final Map<Long, List<ExecState>> states = new ConcurrentHashMap<>();
        /** The groups of a session's exec that timed out: gone before the session's next command is dispatched. */
        volatile List<Long> sessionGroupsToBeGone = List.of();
        final List<String> violations = new CopyOnWriteArrayList<>();
        boolean closed;
        boolean slowKills;
        private Session session;
        private int seq;

        record Running(Execution e, String tag, long group) {
        }

        Sandbox(Path dir, Transport transport) {
            this.dir = dir;
            ExecListener l = new ExecListener() {
                @Override
                public void onTransition(ExecTransition t) {
                    if (t.internal()) {
                        return;
                    }
                    states.computeIfAbsent(t.execId(), k -> new CopyOnWriteArrayList<>()).add(t.to());
                    if (t.to() == ExecState.DISPATCHED) {
                        for (long group : sessionGroupsToBeGone) {
                            if (!HostBackend.groupMembers(group).isEmpty()) {
                                violations.add("exec " + t.execId() + " was dispatched while the session's timed-out group "
                                        + group + " still ran");
                            }
                        }
                    }
                }

                @Override
                public void onEvent(AuditEvent e) {
                }
            };
            // Staged env (no native env) and staged stdin: every exec stages files, and most stage two.
            b = new HostBackend(HostBackend.settings(dir), StdinMode.PAYLOAD, false, List.of(l));
            b.wrapperLeadsGroup = transport == Transport.WRAPPED;
            b.reportsStartTime = transport == Transport.HOST;
        }

        @Override
        public String toString() {
            return "sandbox with " + live.size() + " long execs" + (closed ? ", closed" : "");
        }

        private String tag() {
            return "t" + (++seq) + "x";
        }

        private ExecRequest.Builder request(String command, boolean stdin) {
            ExecRequest.Builder r = ExecRequest.builder(command);
            return stdin ? r.stdin(Payload.ofUtf8("in")) : r;
        }

        /** The user commands launched while {@code action} ran (actions run one at a time). */
        private List<Process> launchedBy(ThrowingRunnable action) {
            int before = b.launched.size();
            action.run();
            return List.copyOf(b.launched.subList(before, b.launched.size()));
        }

        // ---- actions

        void run(boolean stdin) {
            String tag = tag();
            ExecResult r = within(b.start(request((stdin ? "cat; " : "") + "echo " + tag, stdin).build()));
            assertEquals(0, r.exitCode(), "stderr: " + r.stderr().text());
            assertEquals((stdin ? "in" : "") + tag + "\n", r.stdout().text());
            assertFalse(r.timedOut() || r.cancelled(), "a command that ended by itself was reported stopped");
            noStagedFileLeft("after a run");
        }

        void startLong(boolean stdin) {
            String tag = tag();
            Path marker = dir.resolve(tag);
            String command = (stdin ? "cat >/dev/null; " : "") + "echo partial; touch " + marker + "; sleep 30 & wait";
            Execution[] e = new Execution[1];
            int launchesBefore = b.launched.size();
            List<Process> started = launchedBy(() -> {
                e[0] = b.start(request(command, stdin).build());
                long until = System.nanoTime() + HANG.toNanos();
                // The command may touch its marker before the launching thread, back from
                // ProcessBuilder.start, has noted the launch: wait for both.
                while (!Files.exists(marker) || b.launched.size() == launchesBefore) {
                    if (e[0].isDone()) {
                        fail("the long exec ended before its command ran: " + describe(e[0]));
                    }
                    assertTrue(System.nanoTime() < until, "the long exec never started");
                    sleep(10);
                }
            });
            assertEquals(1, started.size(), "one launch per exec");
            live.add(new Running(e[0], tag, started.get(0).pid()));
            noStagedFileLeft("once the command ran (the prefix removes them)");
        }

        void cancel(int i) {
            Running run = live.remove(i);
            run.e().cancel();
            ExecResult r = within(run.e());
            assertTrue(r.cancelled(), "a cancelled exec's result says it was not cancelled");
            assertFalse(r.timedOut(), "a cancelled exec's result says it timed out");
            assertEquals(ExecResult.EXIT_CANCELLED, r.exitCode());
            assertEquals("partial\n", r.stdout().text(), "the output captured before the cancel was lost");
            groupIsGone(run.group(), "a cancelled exec's tree");
        }

        void timeOut(boolean inStaging) {
            String tag = tag();
            int stalls = b.stalls.get();
            if (inStaging) {
                b.stagesBeforeFault = b.stagedPaths.size();
                b.stage = Fault.STALL;
            }
            List<Process> started = launchedBy(() -> {
                ExecResult r = within(b.start(request("echo " + tag + "; sleep 30 & wait", inStaging)
                        .timeout(TIMEOUT).build()));
                assertTrue(r.timedOut(), "a timed-out exec's result says it did not time out");
                assertFalse(r.cancelled(), "a timed-out exec's result says it was cancelled");
                assertEquals(ExecResult.EXIT_TIMEOUT, r.exitCode());
            });
            b.stage = Fault.NONE;
            if (inStaging) {
                assertTrue(b.stalls.get() > stalls, "the staging never stalled: the test proves nothing");
                neverLaunched.add(tag);
                assertLaunchedNever(tag);
            }
            started.forEach(p -> groupIsGone(p.pid(), "a timed-out exec's tree"));
            noStagedFileLeft("after a timeout");
        }

        void cancelWhileStaging() {
            String tag = tag();
            int stalls = b.stalls.get();
            b.stagesBeforeFault = b.stagedPaths.size() + 1; // the env file is staged, the stdin stalls
            b.stage = Fault.STALL;
            Execution e = b.start(request("cat; echo " + tag, true).build());
            long until = System.nanoTime() + HANG.toNanos();
            while (b.stalls.get() == stalls) {
                assertTrue(System.nanoTime() < until, "the staging never stalled");
                sleep(5);
            }
            e.cancel();
            ExecResult r = within(e);
            b.stage = Fault.NONE;
            assertTrue(r.cancelled() && !r.timedOut(), "flags of a cancel before dispatch: " + r);
            neverLaunched.add(tag);
            assertLaunchedNever(tag);
            noStagedFileLeft("once a cancel before dispatch returned");
        }

        void launchFails(RemovalFailure removal) {
            String tag = tag();
            b.launch = Fault.FAIL;
            b.removeThrows.set(switch (removal) {
                case ERROR -> new AssertionError("a clean-up hook's Error");
                case SNEAKY_INTERRUPT -> new InterruptedException("OkHttp's, undeclared");
                case DEADLINE -> new InterruptedIOException("interrupted at its deadline");
                case NONE, STALL -> null;
            });
            b.removal = removal == RemovalFailure.STALL ? Fault.STALL : Fault.NONE;
            Execution e = b.start(request("cat; echo " + tag, true).build());
            try {
                e.await(HANG).ifPresentOrElse(r -> fail("a command whose launch failed has a result: " + r),
                        () -> fail("an exec whose launch failed never ended"));
            } catch (AirlockException expected) {
                // FAILED, as it should
            } catch (InterruptedException ex) {
                throw new AssertionError(ex);
            } finally {
                b.launch = Fault.NONE;
                b.removeThrows.set(null);
                b.removal = Fault.NONE;
            }
            if (removal == RemovalFailure.STALL) {
                leftByFailedRemoval.addAll(stagedLeft()); // every removal hung: close removes the private dir
            } else if (removal != RemovalFailure.NONE) {
                // The file whose removal threw stays (close removes the private dir); the next one goes.
                assertTrue(stagedLeft().size() <= leftByFailedRemoval.size() + 1,
                        "more than the one file whose removal threw was left: " + stagedLeft());
                leftByFailedRemoval.addAll(stagedLeft());
            }
            noStagedFileLeft("once a failed launch was reported");
        }

        void toggleSlowKills() {
            slowKills = !slowKills;
            b.killStepMillis = slowKills ? SLOW_KILL_STEP_MS : 0;
        }

        void sessionExec(boolean timesOut) {
            if (session == null) {
                session = b.env.session();
            }
            String tag = tag();
            if (!timesOut) {
                ExecResult r = session.exec(ExecRequest.of("echo " + tag));
                assertEquals(tag + "\n", r.stdout().text());
                assertFalse(r.timedOut() || r.cancelled());
                return;
            }
            List<Process> started = launchedBy(() -> {
                ExecResult r = session.exec(ExecRequest.builder("sleep 30 & wait").timeout(TIMEOUT).build());
                assertTrue(r.timedOut() && !r.cancelled(), "flags of a session exec's timeout: " + r);
            });
            // At once: the session's next command is dispatched only once that tree is gone (the listener checks).
            sessionGroupsToBeGone = started.stream().map(Process::pid).toList();
            try {
                ExecResult next = session.exec(ExecRequest.of("echo " + tag));
                assertEquals(tag + "\n", next.stdout().text());
            } finally {
                sessionGroupsToBeGone = List.of();
            }
            started.forEach(p -> groupIsGone(p.pid(), "a timed-out session exec's tree"));
        }

        /**
         * Closes on another thread and, while close stops the sandbox (after it took the execs to
         * stop), starts one more: it is refused and never launched.
         */
        void close() {
            List<Process> all = List.copyOf(b.launched);
            int stalls = b.stalls.get();
            b.stop = Fault.STALL;
            Thread closer = new Thread(b.env::close, "closer");
            closer.start();
            long until = System.nanoTime() + HANG.toNanos();
            while (b.stalls.get() == stalls) {
                assertTrue(System.nanoTime() < until, "close never came to stopping the sandbox");
                sleep(5);
            }
            String tag = tag();
            neverLaunched.add(tag);
            assertThrows(EnvironmentClosedException.class, () -> b.start(ExecRequest.of("echo " + tag)),
                    "an exec started while close ran was accepted");
            b.release.countDown(); // no hook stalls after this: close is the chain's last action but for refused starts
            try {
                closer.join(HANG.toMillis());
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertFalse(closer.isAlive(), "close hung");
            closed = true;
            for (Running run : live) {
                assertTrue(run.e().isDone(), "close returned before a live exec had its result");
                assertTrue(describe(run.e()).contains("cancelled=true"), "close did not cancel a live exec: " + describe(run.e()));
            }
            live.clear();
            all.forEach(p -> groupIsGone(p.pid(), "a tree that close should have killed"));
            assertFalse(Files.exists(Path.of(b.target().privateDir())), "close left the private dir (and what was staged in it)");
            assertEquals(1, b.stops.get(), "the sandbox was not stopped exactly once");
        }

        void startAfterClose() {
            String tag = tag();
            assertThrows(EnvironmentClosedException.class, () -> b.start(ExecRequest.of("echo " + tag)));
            neverLaunched.add(tag);
        }

        // ---- invariants

        void slotsAreReleased() {
            if (!closed) {
                assertEquals(live.size(), b.env.live().size(), "ended execs still hold slots (or running ones hold none)");
            }
            assertEquals(List.of(), violations);
        }

        void eachExecEndsOnce() {
            for (Map.Entry<Long, List<ExecState>> e : states.entrySet()) {
                List<ExecState> seen = e.getValue();
                int firstEnd = -1;
                for (int i = 0; i < seen.size(); i++) {
                    if (seen.get(i).isTerminal()) {
                        firstEnd = i;
                        break;
                    }
                }
                assertTrue(firstEnd < 0 || firstEnd == seen.size() - 1, "exec " + e.getKey() + " went on after its end: " + seen);
            }
        }

        void nothingCancelledWasLaunched() {
            neverLaunched.forEach(this::assertLaunchedNever);
        }

        /** After the chain: close (if the chain did not), and check what close promises for everything the chain started. */
        void closeAndCheck() {
            if (!closed) {
                close();
            }
            for (Map.Entry<Long, List<ExecState>> e : states.entrySet()) {
                List<ExecState> seen = e.getValue();
                assertTrue(!seen.isEmpty() && seen.get(seen.size() - 1).isTerminal(), "exec " + e.getKey() + " never ended: " + seen);
            }
            nothingCancelledWasLaunched();
        }

        // ---- checks

        private void assertLaunchedNever(String tag) {
            for (String script : b.launchRequests) {
                assertFalse(script.contains("echo " + tag), "an exec stopped before dispatch was launched: " + tag);
            }
        }

        private List<Path> stagedLeft() {
            try {
                return b.stagedLeft();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private void noStagedFileLeft(String when) {
            List<Path> left = new ArrayList<>(stagedLeft());
            left.removeAll(leftByFailedRemoval);
            assertEquals(List.of(), left, "staged files left " + when);
        }

        /**
         * The group is gone: at once when the kill finished before the result, else (a slow kill
         * the watchdog answered before) within the kill's bound; polled, as the last SIGKILL's
         * delivery is the kernel's.
         */
        private void groupIsGone(long group, String what) {
            long until = System.nanoTime() + HANG.toNanos();
            while (!HostBackend.groupMembers(group).isEmpty()) {
                assertTrue(System.nanoTime() < until, what + " survived: group " + group);
                sleep(10);
            }
        }

        private static ExecResult within(Execution e) {
            try {
                return HostBackend.within(e);
            } catch (InterruptedException ex) {
                throw new AssertionError(ex);
            }
        }

        private static String describe(Execution e) {
            try {
                return e.await(Duration.ZERO).map(r -> "exit=" + r.exitCode() + " timedOut=" + r.timedOut()
                        + " cancelled=" + r.cancelled() + " stdout=" + r.stdout().text()).orElse("running");
            } catch (AirlockException ex) {
                return "failed: " + ex.getMessage();
            } catch (InterruptedException ex) {
                throw new AssertionError(ex);
            }
        }

        private static void sleep(long ms) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }

        @FunctionalInterface
        interface ThrowingRunnable {
            void run();
        }
    }
}
