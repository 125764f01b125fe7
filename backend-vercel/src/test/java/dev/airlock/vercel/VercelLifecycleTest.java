package dev.airlock.vercel;

import dev.airlock.EnvironmentClosedException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.Fault;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.Races;
import dev.airlock.vercel.emulator.VercelEmulator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sandbox's lifetime as a user meets it: kept alive while in use, a stopped session (410) and
 * a stopping one (422) read as the service documents them, stop and delete once under racing
 * closes, and a staged payload whose removal failed emptied all the same.
 */
class VercelLifecycleTest {
    VercelEmulatorFixture fixture;

    @AfterEach
    void close() {
        if (fixture != null) {
            fixture.close();
        }
    }

    private Environment open(Settings s) {
        return new VercelProvider().open(OpenContext.of(s));
    }

    /** A 10 s sandbox runs a 14 s command: the environment extends the timeout while it is open. */
    /**
     * An exec is two commands on the service: the command, and one that removes its output files
     * and says whether it left a process. The core's own group read (a whole exec: command, wait,
     * two reads) and a separate clean-up command are not paid.
     */
    @Test
    void anExecIsTwoCommandsAndLeavesNoOutputFilesBehind() throws InterruptedException {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
        try (Environment env = open(fixture.settings())) {
            // The open's own internal runs remove their output files off the caller's path: let those land first.
            env.exec(dev.airlock.ExecRequest.of("true"));
            long before = commands();
            for (long seen = -1; seen != before; ) {
                seen = before;
                Thread.sleep(1000);
                before = commands();
            }
            for (int i = 0; i < 3; i++) {
                dev.airlock.ExecResult r = env.exec(dev.airlock.ExecRequest.of("echo hi; exit 3"));
                assertEquals(3, r.exitCode(), r.stderr().text());
                assertEquals("hi\n", r.stdout().text());
            }
            long from = before;
            assertEquals(6, commands() - before, () -> "two commands an exec: " + fixture.journal.entries("cmd").stream()
                    .filter(e -> e.dispatch()).skip(from).map(e -> String.join(" ", e.argv()).replaceAll("\\s+", " ")
                            .substring(0, Math.min(90, String.join(" ", e.argv()).length()))).toList());
            assertEquals("3\n", env.exec(dev.airlock.ExecRequest.of("ls -A /tmp/.airlock-vercel-*/ | wc -l")).stdout().text(),
                    "only this exec's own pid, out and err files");
        }
    }

    /**
     * An {@code up} sandbox lives its ttl (the session's timeout), then the service stops it;
     * attaching to it after that is one line that says so and what to do.
     */
    @Test
    void anUpSandboxEndsAfterItsTtlAndAttachingThenSaysSo() throws Exception {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
        VercelProvider p = new VercelProvider();
        String name = p.up(fixture.settings(), java.time.Duration.ofSeconds(10));
        var attach = fixture.settings().with(VercelSettings.SANDBOX_ID, name);
        Environment a = p.open(OpenContext.of(attach));
        assertEquals("up", a.exec(dev.airlock.ExecRequest.of("printf up")).stdout().text(), "alive within its ttl");
        long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        dev.airlock.AirlockException e = null;
        while (e == null && System.nanoTime() < end) {
            Thread.sleep(1000);
            try {
                p.open(OpenContext.of(attach)).close();
            } catch (dev.airlock.AirlockException ended) {
                e = ended;
            }
        }
        assertTrue(e != null, "the sandbox outlived its 10 s ttl by 50 s");
        assertEndedLine(name, e);
        // An environment attached before the end meets it on its next command, told the same way.
        assertEndedLine(name, assertThrows(dev.airlock.AirlockException.class, () -> a.exec(ExecRequest.of("true"))));
        a.close();
        p.down(fixture.settings(), name);
    }

    /**
     * An up sandbox that ends while a command of an attached environment waits (its lifetime ran
     * out, or it was stopped elsewhere): the command fails with the same one line, not "the
     * connection was lost".
     */
    @Test
    void aCommandRunningWhenItsUpSandboxEndsFailsWithTheEndedLine() throws Exception {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
        VercelProvider p = new VercelProvider();
        String name = p.up(fixture.settings(), java.time.Duration.ofMinutes(10));
        try (Environment a = p.open(OpenContext.of(fixture.settings().with(VercelSettings.SANDBOX_ID, name)));
             VercelApi outside = new VercelApi(VercelSettings.from(fixture.settings(), Map.of()), fixture.settings())) {
            dev.airlock.Execution running = a.start(ExecRequest.of("sleep 60"));
            long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            while (fixture.journal.entries("cmd").stream().noneMatch(e -> e.dispatch() && e.command().contains("sleep 60"))
                    && System.nanoTime() < until) {
                Thread.sleep(50);
            }
            outside.stop(outside.sandbox(name).orElseThrow().sessionId());
            assertEndedLine(name, assertThrows(dev.airlock.AirlockException.class,
                    () -> running.await(java.time.Duration.ofSeconds(60))));
        } finally {
            p.down(fixture.settings(), name);
        }
    }

    private static void assertEndedLine(String name, Exception e) {
        assertTrue(e.getMessage().startsWith("the Vercel sandbox " + name + " has ended (its session is ")
                && e.getMessage().endsWith("make a new one with 'airlock --backend vercel up --ttl DURATION' and attach to that")
                && !e.getMessage().contains("\n"), e.getMessage());
    }

    private long commands() {
        return fixture.journal.entries("cmd").stream().filter(e -> e.dispatch()).count();
    }

    @Test
    void aCommandLongerThanTheSandboxTimeoutRunsToItsEndBecauseTheTimeoutIsExtended() {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
        try (Environment env = open(fixture.settings().with(VercelSettings.TIMEOUT, "10s"))) {
            ExecResult r = env.exec(ExecRequest.of("sleep 14; echo still running"));
            assertEquals(0, r.exitCode(), r.stderr().text());
            assertEquals("still running\n", r.stdout().text());
        }
        assertTrue(fixture.journal.entries("extend-timeout").size() >= 2,
                "extended " + fixture.journal.entries("extend-timeout").size() + " times");
    }

    /**
     * The session stops under the environment (its timeout, the dashboard): the service answers
     * 410 {@code sandbox_stopped}, the next exec fails typed and names the sandbox, and close still
     * deletes it.
     */
    @Test
    void aSessionStoppedUnderTheEnvironmentFailsTheNextExecTypedAndCloseStillDeletesTheSandbox() {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
        Environment env = open(fixture.settings());
        try (VercelApi outside = new VercelApi(VercelSettings.from(fixture.settings(), Map.of()), fixture.settings())) {
            outside.stop(outside.sandbox(env.id()).orElseThrow().sessionId());
        }
        // Its script is staged by fs/write first: a 410 there is the stopped session, not a missing file.
        EnvironmentClosedException e = assertThrows(EnvironmentClosedException.class, () -> env.exec(ExecRequest.of("echo ran")));
        assertTrue(e.getMessage().contains("stopped") && e.getMessage().contains("open a new environment"), e.getMessage());
        assertThrows(EnvironmentClosedException.class, () -> env.files().read("/etc/hostname"));
        env.close();
        assertTrue(fixture.emulator.sandboxNames().isEmpty(), "the stopped sandbox was not deleted");
        assertEquals(0, fixture.emulator.runningSessions());
    }

    /** A stop answered 422 {@code sandbox_stopping} (one already under way) is a stop: close goes on to delete. */
    @Test
    void aStopAnsweredSandboxStoppingIsDoneAndTheSandboxIsDeleted() {
        fixture = new VercelEmulatorFixture(FaultPlan.builder(1)
                .first("session-stop", 1, new Fault.Status(422, "", Optional.empty())).build());
        Environment env = open(fixture.settings());
        env.close();
        assertEquals(1, fixture.faults.faults("session-stop"), "the 422 was not answered");
        assertEquals(1, fixture.journal.entries("session-stop").size(), "a 422 stop is not sent again");
        assertEquals(1, fixture.journal.entries("sandbox-delete").size());
        assertTrue(fixture.emulator.sandboxNames().isEmpty(), "the sandbox is deleted");
    }

    /**
     * A command can rewrite anything its user can write, the pid file its wrapper wrote included:
     * naming a group that does not exist there must not make its background job pass for gone. The
     * survivors check asks about the group the launcher record named, read before the command ran.
     */
    @Test
    void aCommandThatRewritesItsPidFileStillHasItsBackgroundJobEnded() throws Exception {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
        try (Environment env = open(fixture.settings())) {
            ExecResult r = env.exec(ExecRequest.of("for f in /tmp/.airlock-vercel-*/*.pid; do echo 999999 > \"$f\"; done\n"
                    + "sleep 600 >/dev/null 2>&1 & echo $! > /tmp/job.pid\necho hi"));
            assertEquals("hi\n", r.stdout().text(), r.stderr().text());
            ExecResult job = env.exec(ExecRequest.of("kill -0 \"$(cat /tmp/job.pid)\" 2>/dev/null && echo alive || echo gone"));
            assertEquals("gone\n", job.stdout().text(), "a background job outlived its exec because the command forged its pid file");
        }
    }

    @Test
    void closeFromManyThreadsStopsAndDeletesTheSandboxExactlyOnce() throws Exception {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
        Environment env = open(fixture.settings());
        assertEquals("hi", env.exec(ExecRequest.of("printf hi")).stdout().text());
        Races.atOnce(8, () -> {
            env.close();
            return null;
        });
        assertEquals(1, fixture.journal.entries("session-stop").size());
        assertEquals(1, fixture.journal.entries("sandbox-delete").size());
        assertTrue(fixture.emulator.sandboxNames().isEmpty());
        assertEquals(0, fixture.emulator.runningSessions());
    }

    /**
     * There is no delete endpoint: a staged payload is removed by a command, and when that command
     * cannot run (here its dispatch is refused) the file is overwritten with an empty one, so its
     * bytes are gone either way.
     */
    @Test
    void aStagedPayloadWhoseRemovalCannotRunIsOverwrittenWithAnEmptyFile() throws IOException {
        String path = "/tmp/.airlock-stage-test/.airlock-stdin-cancelled";
        int before;
        try (VercelEmulatorFixture counting = new VercelEmulatorFixture(FaultPlan.none());
             Environment probe = open(counting.settings())) {
            VercelBackend.of(probe).stage(path, Payload.ofUtf8("secret staged payload"), Deadline.in(Duration.ofMinutes(1)));
            // Opening and staging run commands too; counted at arrival, as the fault plan counts,
            // once each launched command's output clean-up (sent in the background) has arrived.
            before = settledCommands(counting);
        }
        // The first command after opening and staging is the removal: refused, it never runs.
        fixture = new VercelEmulatorFixture(FaultPlan.builder(1)
                .nth("cmd", before + 1, new Fault.Status(400, "", Optional.empty())).build());
        try (Environment env = open(fixture.settings())) {
            VercelBackend.of(env).stage(path, Payload.ofUtf8("secret staged payload"), Deadline.in(Duration.ofMinutes(1)));
            assertEquals(before, settledCommands(fixture), "opening and staging ran a different number of commands");
            VercelBackend.of(env).remove(path, Deadline.in(Duration.ofMinutes(1)));
            assertEquals(1, fixture.faults.faults("cmd"), "the removal was not refused: " + fixture.faults.report());
            ExecResult r = env.exec(ExecRequest.of("wc -c < " + path));
            assertEquals("0", r.stdout().text().strip(), () -> "the staged bytes are still there: exit " + r.exitCode() + ", stderr " + r.stderr().text());
        }
        List<VercelEmulator.StagedWrite> writes = fixture.emulator.writes().stream().filter(w -> w.path().equals(path)).toList();
        assertEquals(List.of(21L, 0L), writes.stream().map(VercelEmulator.StagedWrite::size).toList());
        assertTrue(writes.stream().allMatch(w -> w.headerMode() == 0600), writes.toString());
    }

    /**
     * The number of commands sent once none has arrived for a second (bounded at 10 s): a launch's
     * output files are removed by the next launch's wrapper, so nothing is sent in the background
     * after a call; this only lets a slow arrival land before the count.
     */
    private static int settledCommands(VercelEmulatorFixture f) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long seen = -1;
        while (true) {
            long now = f.faults.callCounts().getOrDefault("cmd", 0L);
            if (now == seen || System.nanoTime() > deadline) {
                return Math.toIntExact(now);
            }
            seen = now;
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }
}
