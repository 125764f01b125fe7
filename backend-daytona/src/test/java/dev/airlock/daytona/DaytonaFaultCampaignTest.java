package dev.airlock.daytona;

import dev.airlock.AirlockException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.emulator.Fault;
import dev.airlock.emulator.FaultPlan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Daytona client under random faults on the emulator, as Modal's and Vercel's campaigns. */
class DaytonaFaultCampaignTest {
    @TempDir
    Path state;

    /**
     * Faults on every kind of call, exec and uploads included (errors, 429s with Retry-After, lost
     * answers, cut downloads, slow answers): each run is byte-exact or a typed error, no command
     * runs twice, no staged or output file is left; the faults per call are printed.
     */
    @Test
    void everyRunIsExactOrATypedErrorAndNoCommandRunsTwice() throws IOException {
        int runs = Integer.getInteger("airlock.daytona.campaign.runs", 200);
        FaultPlan plan = FaultPlan.builder(42)
                .sometimes("session-exec", 0.05, new Fault.LoseResponse())
                .sometimes("session-exec", 0.05, new Fault.Status(503, "", Optional.empty()))
                .sometimes("command-get", 0.1, new Fault.Status(503, "", Optional.empty()))
                .sometimes("command-get", 0.05, new Fault.LoseResponse())
                .sometimes("files-upload", 0.1, new Fault.Status(429, "", Optional.of(Duration.ofMillis(10))))
                .sometimes("files-upload", 0.05, new Fault.LoseResponse())
                .sometimes("files-download", 0.1, new Fault.Status(502, "", Optional.empty()))
                .sometimes("files-download", 0.05, new Fault.CutAfterBytes(3))
                .sometimes("files-permissions", 0.05, new Fault.Status(503, "", Optional.empty()))
                .sometimes("session-create", 0.05, new Fault.LoseResponse())
                .sometimes("files-delete", 0.05, new Fault.Status(503, "", Optional.empty()))
                // slow answers: each call still ends, and the run is still exact
                .sometimes("files-folder", 0.05, new Fault.Delay(Duration.ofMillis(200)))
                .sometimes("command-get", 0.05, new Fault.Delay(Duration.ofMillis(200)))
                .sometimes("session-delete", 0.05, new Fault.Status(503, "", Optional.empty()))
                .build();
        try (DaytonaEmulatorFixture fixture = new DaytonaEmulatorFixture(state, plan)) {
            run(fixture, plan, runs);
        }
    }

    private static void run(DaytonaEmulatorFixture fixture, FaultPlan plan, int runs) throws IOException {
        int exact = 0;
        int typed = 0;
        Environment opened = null;
        for (int attempt = 0; opened == null; attempt++) {
            try {
                opened = fixture.open(fixture.settings());
            } catch (AirlockException e) {
                assertTrue(attempt < 10, "open kept failing under faults: " + e.getMessage());
            }
        }
        try (Environment env = opened) {
            Random rnd = new Random(9);
            for (int i = 0; i < runs; i++) {
                byte[] payload = new byte[1 + rnd.nextInt(5000)];
                rnd.nextBytes(payload);
                ExecResult r;
                try {
                    r = env.exec(ExecRequest.builder("cat; printf x >&2").stdin(payload).build());
                } catch (AirlockException e) {
                    typed++;
                    continue;
                }
                assertEquals(0, r.exitCode(), "run " + i);
                assertArrayEquals(payload, r.stdout().bytes(), "run " + i);
                assertEquals("x", r.stderr().text(), "run " + i);
                exact++;
            }
            fixture.journal.assertNoDoubleDispatch();
            assertEquals(List.of(), fixture.stagedLeft(env), "staged files left");
            assertEquals(List.of(), fixture.outputsLeft(env), "output files left");
        }
        System.out.println("fault campaign: " + runs + " runs, " + exact + " byte-exact, " + typed + " typed errors");
        System.out.println("faults per call: " + plan.faultCounts());
        System.out.println("calls: " + plan.callCounts());
        assertEquals(runs, exact + typed);
        assertTrue(exact > runs / 2, "most runs should survive the retried faults: " + exact + "/" + runs);
    }
}
