package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.StdinMode;
import dev.airlock.exec.HostBackend.Fault;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.Launch;
import dev.airlock.spi.RemoteProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The kill of a stopped exec's process tree, as its caller sees it: the result waits for the kill
 * (no process of the tree outlives it) but not for a grace nobody needs, the tree is found without
 * the backend naming its group, and what a finished command left running dies at close.
 */
class ExecKillTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();


    /**
     * The kill's hooks (group reads, signals) are bounded by the stop bound: a roomy slack keeps a
     * loaded machine's slow group read from passing for a failed kill.
     */
    private Settings settings(String... more) {
        List<String> kv = new ArrayList<>(List.of("airlock.kill.slack", "5s"));
        kv.addAll(List.of(more));
        return HostBackend.settings(dir, kv.toArray(String[]::new));
    }

    private HostBackend open(String... more) {
        return opened(new HostBackend(settings(more), StdinMode.PIPE, true, List.of()));
    }

    private HostBackend opened(HostBackend b) {
        opened.add(b);
        return b;
    }

    /** After close returned its kill was sent: this allows only for the signal's delivery. */
    private static final Duration GONE = Duration.ofSeconds(3);

    private static void eventually(String what, BooleanSupplier done) throws InterruptedException {
        eventually(what, HostBackend.HANG, done);
    }

    private static void eventually(String what, Duration bound, BooleanSupplier done) throws InterruptedException {
        long until = System.nanoTime() + bound.toNanos();
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < until, what);
            Thread.sleep(10);
        }
    }

    private static long pidIn(Path file) throws Exception {
        eventually("the command never wrote its pid", () -> Files.exists(file) && file.toFile().length() > 0);
        return Long.parseLong(Files.readString(file).strip());
    }

    /**
     * A timed-out command that dies of its SIGTERM is answered as soon as it is gone: the kill
     * grace (long here) is for commands that ignore the TERM, not a wait imposed on every timeout.
     */
    @Test
    void aTimedOutCommandThatDiesOfTermIsAnsweredWithoutWaitingOutTheKillGrace() throws Exception {
        HostBackend b = open("airlock.kill.grace", "20s");
        ExecResult r = HostBackend.within(b.start(ExecRequest.builder("sleep 30").timeout(Duration.ofMillis(300)).build()));
        assertTrue(r.timedOut());
        assertTrue(!HostBackend.alive(b.launched.get(0).pid()), "the timed-out command still runs");
    }

    /**
     * The shell died of the TERM but a child that ignores it still runs: the result waits for its
     * SIGKILL (held here until the test lets it go), so no process of a killed command outlives its result.
     */
    @Test
    void noProcessOfAKilledCommandOutlivesItsResult() throws Exception {
        HostBackend b = open();
        b.forceKill = Fault.STALL_UNINTERRUPTIBLY;
        Path pid = dir.resolve("survivor.pid");
        Execution e = b.start(ExecRequest.builder("(trap '' TERM; exec sleep 300) >/dev/null 2>&1 & echo $! > '" + pid
                + "'; wait").timeout(Duration.ofSeconds(1)).build());
        long survivor = pidIn(pid);
        HostBackend.await(b.stalled); // the SIGKILL for the survivor is on its way
        assertTrue(e.await(Duration.ofMillis(500)).isEmpty(), "the result came while the command's survivor still ran");
        b.release.countDown();
        assertTrue(HostBackend.within(e).timedOut());
        eventually("the child that ignored TERM was never killed", () -> !HostBackend.alive(survivor));
    }

    /**
     * A backend's launch that returns with its thread still flagged interrupted (it overran its
     * hook deadline and then returned anyway): the exec fails as interrupted, and the command it
     * started is killed, not left running unwatched.
     */
    @Test
    void aLaunchReturningInterruptedFailsTheExecAndKillsTheCommand() throws Exception {
        HostBackend b = opened(new HostBackend(settings(), dev.airlock.Capabilities.pipe().withNativeEnv(true),
                List.of()) {
            @Override
            public RemoteProcess launch(Launch l, Deadline deadline) throws IOException {
                RemoteProcess p = super.launch(l, deadline);
                if (!l.internal()) {
                    Thread.currentThread().interrupt();
                }
                return p;
            }
        });
        Execution e = b.start(ExecRequest.of("sleep 30"));
        BackendException x = assertThrows(BackendException.class, () -> e.await(HostBackend.HANG));
        assertTrue(x.getMessage().contains("interrupted"), x.getMessage());
        eventually("the command of an exec that failed as interrupted still runs", () -> !HostBackend.alive(b.launched.get(0).pid()));
    }

    /**
     * A backend that cannot name the command's process group: the launcher record names it, so a
     * cancel still kills the command.
     */
    @Test
    void aCancelKillsTheCommandWhenOnlyTheLauncherRecordNamesItsGroup() throws Exception {
        HostBackend b = opened(new HostBackend(settings(), dev.airlock.Capabilities.pipe().withNativeEnv(true),
                List.of()) {
            @Override
            public RemoteProcess launch(Launch l, Deadline deadline) throws IOException {
                RemoteProcess p = super.launch(l, deadline);
                return l.internal() ? p : new DelegatingProcess(p) {
                    @Override
                    public OptionalLong processGroup() {
                        return OptionalLong.empty();
                    }

                    @Override
                    public OptionalLong startTime() {
                        return OptionalLong.empty();
                    }
                };
            }
        });
        Execution e = b.start(ExecRequest.of("sleep 30"));
        b.awaitLaunched();
        e.cancel();
        assertTrue(HostBackend.within(e).cancelled());
        eventually("the cancelled command still runs", () -> !HostBackend.alive(b.launched.get(0).pid()));
    }

    /**
     * Wherever the job's own output goes, it ends with its exec: either output held alone is
     * enough, and a job that sent both elsewhere still holds the copy of stdout the launcher gives
     * every process of the command. (The shell stays a second so the pumps read before it exits: the JDK closes a
     * process's pipes when it exits unless a read is under way, which hides the job from this
     * test backend; the local backend finds such jobs through the session instead.)
     */
    @ParameterizedTest(name = "sleep 300 {0} &")
    @ValueSource(strings = {">/dev/null", "2>/dev/null", ">/dev/null 2>&1"})
    void aBackgroundJobEndsWithItsExecWhereverItsOutputGoes(String other) throws Exception {
        HostBackend b = open("airlock.exec.output-grace", "200ms");
        Path pid = dir.resolve("job.pid");
        ExecResult r = b.exec(ExecRequest.of("sleep 300 " + other + " & echo $! > '" + pid + "'; sleep 1"));
        assertTrue(r.exitCode() == 0, r.stderr().text());
        assertFalse(HostBackend.runs(pidIn(pid)), "the background job (" + other + ") outlived its exec's result");
    }

    /**
     * A backend that can tell a command left processes behind (a background job that let go of
     * the output): those end with the exec too.
     */
    @Test
    void survivorsTheBackendReportsEndWithTheirExec() throws Exception {
        java.util.concurrent.atomic.AtomicReference<OptionalLong> asked = new java.util.concurrent.atomic.AtomicReference<>();
        HostBackend b = opened(new HostBackend(settings(), dev.airlock.Capabilities.pipe().withNativeEnv(true),
                List.of()) {
            @Override
            public RemoteProcess launch(Launch l, Deadline deadline) throws IOException {
                RemoteProcess p = super.launch(l, deadline);
                return l.internal() ? p : new DelegatingProcess(p) {
                    @Override
                    public boolean hasSurvivors(OptionalLong group) {
                        asked.set(group);
                        return true; // as a backend that checked the group would say: the job below runs on
                    }
                };
            }
        });
        Path pid = dir.resolve("job.pid");
        int before = b.launched.size();
        // The job lets go of every output copy (the launcher's fd 9 included): only the backend's answer can tell of it.
        ExecResult r = b.exec(ExecRequest.of("sleep 300 >/dev/null 2>&1 9>&- & echo $! > '" + pid + "'"));
        assertTrue(r.exitCode() == 0, r.stderr().text());
        assertFalse(HostBackend.runs(pidIn(pid)), "a survivor the backend reported outlived its exec's result");
        // The backend is asked about the group the launcher record named, not one the sandbox could rewrite.
        assertEquals(OptionalLong.of(b.launched.get(before).pid()), asked.get());
    }
    /**
     * Where the transport ends the output at the command's exit (Docker), held output cannot tell
     * that a job was left: the core asks the target for the group, and the job ends with its exec
     * even when it holds none of the command's descriptors.
     */
    @Test
    void whereTheOutputEndsAtExitTheGroupIsAskedForJobs() throws Exception {
        HostBackend b = opened(new HostBackend(settings(), dev.airlock.Capabilities.pipe().withNativeEnv(true),
                List.of()) {
            @Override
            public boolean outputEndsAtExit() {
                return true;
            }
        });
        Path pid = dir.resolve("job.pid");
        ExecResult r = b.exec(ExecRequest.of("sleep 300 >/dev/null 2>&1 & echo $! > '" + pid + "'"));
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertFalse(HostBackend.runs(pidIn(pid)), "a job that let go of every descriptor outlived its exec's result");
    }

    /**
     * A timed-out tree that ignores SIGTERM dies even when one SIGKILL attempt fails (a transient
     * error) or a SIGTERM hook overran its deadline (it returned, or failed plainly, with its
     * thread still flagged interrupted): the kill is tried again, and an interrupt a hook left
     * behind never abandons it.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"one SIGKILL fails", "SIGTERM interrupted, returns", "SIGTERM interrupted, fails"})
    void aTimedOutTreeDiesWhenAKillStepFails(String how) throws Exception {
        HostBackend b = open();
        switch (how) {
            case "one SIGKILL fails" -> b.forceKillFailures.set(1);
            case "SIGTERM interrupted, returns" -> b.term = Fault.INTERRUPTED_RETURNS;
            default -> b.term = Fault.INTERRUPTED_PLAIN;
        }
        ExecResult r = HostBackend.within(b.start(ExecRequest.builder("trap '' TERM; sleep 30; echo not-killed")
                .timeout(Duration.ofMillis(300)).build()));
        assertTrue(r.timedOut());
        long pgid = b.launched.get(0).pid();
        try {
            eventually("the timed-out tree outlived its kill: " + HostBackend.groupMembers(pgid),
                    () -> HostBackend.groupMembers(pgid).isEmpty());
        } finally {
            HostBackend.killGroupMembers(pgid);
        }
    }

    /**
     * A kill that failed until the environment closed: close kills the timed-out tree, although
     * the watchdog had answered its caller before capture ever finished.
     */
    @Test
    void closeKillsATimedOutTreeWhoseKillFailed() throws Exception {
        HostBackend b = open();
        b.forceKill = Fault.FAIL;
        ExecResult r = HostBackend.within(b.start(ExecRequest.builder("trap '' TERM; sleep 30; echo not-killed")
                .timeout(Duration.ofMillis(300)).build()));
        assertTrue(r.timedOut());
        long pgid = b.launched.get(0).pid();
        try {
            assertTrue(!HostBackend.groupMembers(pgid).isEmpty(), "the tree died although every SIGKILL failed");
            b.forceKill = Fault.NONE; // the target answers again
            b.env.close();
            eventually("the timed-out tree outlived close: " + HostBackend.groupMembers(pgid), GONE,
                    () -> HostBackend.groupMembers(pgid).isEmpty());
        } finally {
            HostBackend.killGroupMembers(pgid);
        }
    }

    /**
     * SIGTERM first, and the command's own clean-up (a TERM trap) gets its grace before SIGKILL:
     * a timed-out command is not killed outright.
     */
    @Test
    void aTimedOutCommandsTermTrapRunsWithinTheGrace() throws Exception {
        HostBackend b = open("airlock.kill.grace", "20s");
        Path cleaned = dir.resolve("cleaned");
        ExecResult r = HostBackend.within(b.start(ExecRequest.builder("trap 'sleep 0.3; echo done > \"" + cleaned
                + "\"; exit 0' TERM; sleep 30 & wait").timeout(Duration.ofMillis(300)).build()));
        assertTrue(r.timedOut());
        eventually("the TERM trap's clean-up never ran: the command got no grace", HostBackend.HANG,
                () -> Files.exists(cleaned));
        assertEquals("done\n", Files.readString(cleaned));
    }

    /** A kill that got through leaves nothing for close to kill again: close signals no group. */
    @Test
    void aKilledTreeIsNotKilledAgainAtClose() throws Exception {
        HostBackend b = open();
        ExecResult r = HostBackend.within(b.start(ExecRequest.builder("trap '' TERM; sleep 30")
                .timeout(Duration.ofMillis(300)).build()));
        assertTrue(r.timedOut());
        long pgid = b.launched.get(0).pid();
        eventually("the timed-out tree outlived its kill", HostBackend.HANG, () -> HostBackend.groupMembers(pgid).isEmpty());
        eventually("no SIGKILL was sent", HostBackend.HANG, () -> b.signals.contains("KILL " + pgid));
        // The kill's last step (forgetting the tree) follows its SIGKILL; the trees close would kill:
        eventually("the killed tree is still kept for close", HostBackend.HANG, () -> b.env.live().lingering() == 0);
        List<String> before = List.copyOf(b.signals);
        b.env.close();
        assertEquals(before, List.copyOf(b.signals), "close signalled a tree whose kill had got through");
    }

    /**
     * The kill's own retries end at {@link Reaper#KILL_REACH}: a tree whose every SIGKILL failed
     * until then is kept for close, which kills it once the target answers again. (The case above
     * heals the target while the retries still run, so they succeed on their own.)
     */
    @Test
    void closeKillsATreeWhoseKillGaveUp() throws Exception {
        HostBackend b = open();
        b.forceKill = Fault.FAIL;
        ExecResult r = HostBackend.within(b.start(ExecRequest.builder("trap '' TERM; sleep 60; echo not-killed")
                .timeout(Duration.ofMillis(300)).build()));
        assertTrue(r.timedOut());
        long pgid = b.launched.get(0).pid();
        try {
            eventually("no SIGKILL was tried", HostBackend.HANG, () -> b.signals.contains("KILL " + pgid));
            long firstKill = System.nanoTime();
            // Given up: the reach has passed and no try came for twice the longest pause between tries.
            long lastCount = -1;
            long quietSince = System.nanoTime();
            long end = firstKill + Reaper.KILL_REACH.multipliedBy(3).toNanos();
            while (System.nanoTime() < end) {
                long count = b.signals.stream().filter(("KILL " + pgid)::equals).count();
                if (count != lastCount) {
                    lastCount = count;
                    quietSince = System.nanoTime();
                } else if (System.nanoTime() - firstKill > Reaper.KILL_REACH.toNanos()
                        && System.nanoTime() - quietSince > 2 * Backoff.MAX_MS * 1_000_000L) {
                    break;
                }
                Thread.sleep(100);
            }
            assertTrue(System.nanoTime() < end, "the SIGKILL was still being tried " + Reaper.KILL_REACH.multipliedBy(3)
                    + " after its first try");
            assertTrue(!HostBackend.groupMembers(pgid).isEmpty(), "the tree died although every SIGKILL failed");
            b.forceKill = Fault.NONE; // the target answers again
            b.env.close();
            eventually("a timed-out tree whose kill gave up outlived close: " + HostBackend.groupMembers(pgid), GONE,
                    () -> HostBackend.groupMembers(pgid).isEmpty());
        } finally {
            HostBackend.killGroupMembers(pgid);
        }
    }

    /**
     * One rule on every backend: what a command leaves running ends with it. A background job
     * holding the output used to run on until close (and hold two pump threads while it did, so
     * enough of them exhausted the pool); now its tree is killed once the output grace is over,
     * before the result, and no pump thread stays behind.
     */
    @Test
    void leftoverJobsEndWithTheirExec() throws Exception {
        HostBackend b = open("airlock.exec.output-grace", "100ms");
        Path pids = dir.resolve("jobs.pid");
        try {
            for (int i = 0; i < 6; i++) {
                // The shell stays a moment so the pumps are reading when it exits.
                ExecResult r = b.exec(ExecRequest.of("sleep 120 & echo $! >> '" + pids + "'; echo hi; sleep 0.3; exit 3"));
                assertEquals(3, r.exitCode(), "the command's own exit code; stderr: " + r.stderr().text());
                assertEquals("hi\n", r.stdout().text());
                long pid = jobs(pids).get(i);
                assertFalse(HostBackend.runs(pid), "run " + i + ": the background job " + pid + " outlived its exec's result");
            }
            eventually("the ended jobs' pumps still hold " + pumpThreads() + " threads", HostBackend.HANG,
                    () -> pumpThreads() == 0);
        } finally {
            jobs(pids).forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        }
    }

    private static List<Long> jobs(Path pids) throws IOException {
        return Files.exists(pids) ? Files.readAllLines(pids).stream().map(String::strip).filter(l -> !l.isEmpty())
                .map(Long::parseLong).toList() : List.of();
    }

    /** Threads of this JVM blocked in an output pump (any environment's: the tests of this class run one at a time). */
    private static long pumpThreads() {
        return Thread.getAllStackTraces().entrySet().stream().filter(e -> e.getKey().isAlive())
                .filter(e -> java.util.Arrays.stream(e.getValue())
                        .anyMatch(f -> f.getClassName().equals(OutputPump.class.getName()) && f.getMethodName().equals("run")))
                .count();
    }
}
