package dev.airlock.vercel;

import dev.airlock.AirlockException;
import dev.airlock.DispatchOutcomeUnknownException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Cut streams, lost answers and exactly-once lifecycle calls against the emulator's fault plan. */
class VercelFaultsTest {
    VercelEmulatorFixture fixture;

    @AfterEach
    void close() {
        if (fixture != null) {
            fixture.close();
        }
    }

    /** What following a command's logs saw: reconnects, lines (each once) and the wait's exit code. */
    /** {@code line1\n...lineN\n}: what the scripts below print. */
    private static String expectedLines(long n) {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= n; i++) {
            b.append("line").append(i).append('\n');
        }
        return b.toString();
    }

    record Followed(int reconnects, long lines, int exit) {
    }

    /** Starts {@code script} on an emulator with {@code faults}, follows its logs to the end, then waits for it. */
    private Followed followUnder(String faults, String script) {
        fixture = new VercelEmulatorFixture(FaultPlan.parse(faults, 1));
        try (VercelApi api = new VercelApi(VercelSettings.from(fixture.settings(), Map.of()), fixture.settings())) {
            VercelApi.SessionInfo info = api.create(VercelBackend.tags(false));
            String cmd = api.run(info.sessionId(), List.of("sh", "-c", script), null);
            // Entries are chunks as the sandbox read them (two quick lines may share one), so the
            // lines are counted in the stdout they carry, joined.
            StringBuilder stdout = new StringBuilder();
            int reconnects = api.followLogs(info.sessionId(), cmd, entry -> {
                try {
                    com.fasterxml.jackson.databind.JsonNode e = new com.fasterxml.jackson.databind.ObjectMapper().readTree(entry);
                    if ("stdout".equals(e.path("stream").asText())) {
                        stdout.append(e.path("data").asText());
                    }
                } catch (java.io.IOException ex) {
                    throw new java.io.UncheckedIOException(ex);
                }
            });
            long lines = stdout.toString().lines().count();
            assertEquals(expectedLines(lines), stdout.toString(), "every line once, none twice, in order");
            return new Followed(reconnects, lines, api.await(info.sessionId(), cmd));
        }
    }

    @Test
    void aLogStreamCutThreeTimesStillYieldsEveryLineAndTheWaitItsExitCode() {
        Followed f = followUnder("cmd-logs:cut-lines=2@first=3,cmd-get:lose@first=3",
                "for i in 1 2 3 4 5 6 7 8; do echo line$i; sleep 0.05; done; exit 3");
        assertEquals(3, f.reconnects(), "three cuts, three reconnects");
        assertEquals(8, f.lines(), "every line once, none twice");
        assertEquals(3, f.exit(), "the wait lost three answers and still has the exit code");
        assertEquals(3, fixture.faults.faults("cmd-get"));
        fixture.journal.assertNoDoubleDispatch();
    }

    /** The edge cuts long streams by time: a log stream cut 300 ms in, three times, still yields every line once. */
    @Test
    void aLogStreamCutByTimeThreeTimesStillYieldsEveryLineOnce() {
        Followed f = followUnder("cmd-logs:cut-after=300ms@first=3",
                "i=0; while [ $i -lt 25 ]; do i=$((i+1)); echo line$i; sleep 0.1; done; exit 2");
        assertEquals(3, fixture.faults.faults("cmd-logs"), fixture.faults.report());
        assertEquals(3, f.reconnects(), "three cuts, three reconnects");
        assertEquals(25, f.lines(), "every line once, none twice");
        assertEquals(2, f.exit());
    }

    @Test
    void outputIsCompleteAndTheExitRightWhenEveryWaitIsCutThreeTimes() {
        fixture = new VercelEmulatorFixture(FaultPlan.parse("cmd-get:lose@first=3", 1));
        try (Environment env = new VercelProvider().open(OpenContext.of(fixture.settings()))) {
            ExecResult r = env.exec(ExecRequest.builder("head -c 300000 /dev/zero | tr '\\0' x; printf end; exit 5").build());
            assertEquals(5, r.exitCode());
            assertEquals(300003, r.stdout().bytes().length);
            assertTrue(r.stdout().text().endsWith("xend"));
        }
        fixture.journal.assertNoDoubleDispatch();
    }

    @Test
    void outputReadAfterTheExitIsCompleteWhenItsDownloadOutlastsTheOutputGraceAndIsCut() {
        // Every output read is slow, and the first three final reads are cut after 5 bytes: the core
        // gives a pipe 50 ms after the end, so the end must wait for the downloads, which resume.
        fixture = new VercelEmulatorFixture(FaultPlan.parse("fs-read:cut-bytes=5@first=3,fs-read:delay=1s@always", 1));
        try (Environment env = new VercelProvider().open(OpenContext.of(fixture.settings()
                .with("airlock.exec.output-grace", "50ms")))) {
            ExecResult r = env.exec(ExecRequest.builder("head -c 200000 /dev/zero | tr '\\0' y; printf end >&2; exit 4").build());
            assertEquals(4, r.exitCode());
            assertEquals(200000, r.stdout().bytes().length, "all of stdout");
            assertEquals("end", r.stderr().text());
        }
    }

    /**
     * Every output download breaks off after 70 000 bytes, so a 300 000-byte output can never be
     * read whole: the exec fails with a typed error, never returns the first part with the exit code.
     */
    @Test
    void anOutputThatCannotBeReadWholeFailsTypedNeverShort() {
        fixture = new VercelEmulatorFixture(FaultPlan.parse("fs-read:cut-bytes=70000@always", 1));
        try (Environment env = new VercelProvider().open(OpenContext.of(fixture.settings()))) {
            assertEquals("small output passes", env.exec(ExecRequest.of("printf 'small output passes'")).stdout().text());
            dev.airlock.BackendException e = assertThrows(dev.airlock.BackendException.class,
                    () -> env.exec(ExecRequest.of("head -c 300000 /dev/zero | tr '\\0' z; exit 3")));
            assertTrue(e.getMessage().contains("lost"), e.getMessage());
        }
        fixture.journal.assertNoDoubleDispatch();
    }

    @Test
    void aLostCommandDispatchIsNeverSentAgain() {
        fixture = new VercelEmulatorFixture(FaultPlan.parse("cmd:lose@nth=1", 1));
        VercelSettings s = VercelSettings.from(fixture.settings(), Map.of());
        try (VercelApi api = new VercelApi(s, fixture.settings())) {
            VercelApi.SessionInfo info = api.create(VercelBackend.tags(false));
            assertThrows(DispatchOutcomeUnknownException.class,
                    () -> api.run(info.sessionId(), List.of("sh", "-c", "echo once >> /tmp/count"), null));
            String id = api.run(info.sessionId(), List.of("sh", "-c", "true"), null);
            api.await(info.sessionId(), id);
            // The lost command runs beside the second one: its file is asked for until it is there
            // (a bound, not a wait for an idle machine), then read whole.
            byte[] count = null;
            for (int i = 0; i < 300 && count == null; i++) {
                try (var in = api.read(info.sessionId(), "/tmp/count")) {
                    count = in.readAllBytes();
                } catch (dev.airlock.NoSuchPathException notYet) {
                    sleep(100);
                } catch (java.io.IOException e) {
                    throw new AssertionError(e);
                }
            }
            assertArrayEquals("once\n".getBytes(StandardCharsets.UTF_8), count, "it ran once, and only once");
            assertEquals(2, fixture.journal.entries("cmd").stream().filter(e -> e.dispatch()).count(), "two commands reached the service, not three");
        }
    }

    @Test
    void closeStopsAndDeletesExactlyOnceEvenWhenTheirAnswersAreLost() {
        fixture = new VercelEmulatorFixture(FaultPlan.parse("session-stop:lose@first=1,sandbox-delete:status=503@first=1", 1));
        Environment env = new VercelProvider().open(OpenContext.of(fixture.settings()));
        assertEquals(0, env.exec(ExecRequest.builder("true").build()).exitCode());
        env.close();
        env.close();
        assertEquals(0, fixture.emulator.runningSessions());
        assertTrue(fixture.emulator.sandboxNames().isEmpty(), "the sandbox is deleted");
        assertEquals(1, fixture.journal.entries("sandbox-create").size());
        // a retried stop or delete is the same call again: at most one more each, and nothing after close
        long stops = fixture.journal.entries("session-stop").size();
        long deletes = fixture.journal.entries("sandbox-delete").size();
        assertEquals(2, stops, "one lost stop, then one retry");
        assertEquals(2, deletes, "one 503, then one retry");
        assertThrows(AirlockException.class, () -> env.exec(ExecRequest.builder("true").build()));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
