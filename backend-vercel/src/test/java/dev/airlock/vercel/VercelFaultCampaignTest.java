package dev.airlock.vercel;

import dev.airlock.AirlockException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many runs under random faults on every call (dispatch and uploads included): each run is
 * byte-exact or a typed error, no command is ever dispatched twice, and nothing is left running.
 */
class VercelFaultCampaignTest {
    static final int RUNS = 200;

    @Test
    void everyRunIsExactOrATypedErrorAndNoCommandRunsTwice() {
        FaultPlan plan = FaultPlan.parse("cmd:lose@p=0.03,cmd:status=503@p=0.03,cmd-get:lose@p=0.1,"
                + "cmd-get:status=429+0s@p=0.05,fs-write:status=502@p=0.1,fs-write:lose@p=0.05,fs-read:status=503@p=0.1,"
                + "fs-read:cut-bytes=5@p=0.05,session-get:status=500@p=0.1,cmd-kill:status=503@p=0.1", 42);
        int exact = 0;
        int typed = 0;
        Random random = new Random(7);
        try (VercelEmulatorFixture fixture = new VercelEmulatorFixture(plan)) {
            Environment env = openWithRetries(fixture);
            try {
                for (int i = 0; i < RUNS; i++) {
                    byte[] payload = new byte[random.nextInt(70_000)];
                    random.nextBytes(payload);
                    try {
                        ExecResult r = env.exec(ExecRequest.builder("cat; exit " + (i % 7)).stdin(payload).build());
                        assertEquals(i % 7, r.exitCode(), "run " + i);
                        int run = i;
                        assertArrayEquals(payload, r.stdout().bytes(), () -> "run " + run + " is not byte-exact (stderr: "
                                + r.stderr().text() + "; calls so far: " + plan.report().replace('\n', ';') + ")");
                        exact++;
                    } catch (AirlockException e) {
                        typed++;
                    }
                }
                assertEquals("", stagedLeft(env), "a staged payload outlived its run (emptied is fine: there is no delete endpoint)");
            } finally {
                env.close();
            }
            System.out.println("[vercel campaign] " + RUNS + " runs: " + exact + " byte-exact, " + typed + " typed errors");
            System.out.println("[vercel campaign] calls and faults: " + plan.report().replace('\n', ';'));
            fixture.journal.assertNoDoubleDispatch();
            assertEquals(0, fixture.emulator.runningSessions(), "nothing left running");
            assertTrue(fixture.emulator.sandboxNames().isEmpty(), "the sandbox was deleted");
            assertTrue(exact > RUNS / 2, "most runs succeed: " + exact);
        }
    }

    /** Staged stdin or scripts that still hold bytes, asked again while a fault fails the asking. */
    private static String stagedLeft(Environment env) {
        AirlockException last = null;
        for (int i = 0; i < 10; i++) {
            try {
                ExecResult r = env.exec(ExecRequest.of("find /tmp \"$HOME\" \\( -name '.airlock-stdin-*' -o -name '.airlock-script-*' \\)"
                        + " -type f -size +0c 2>/dev/null; true"));
                if (r.exitCode() == 0) {
                    return r.stdout().text();
                }
            } catch (AirlockException e) {
                last = e;
            }
        }
        throw new AssertionError("could not look for staged files under the faults", last);
    }

    private static Environment openWithRetries(VercelEmulatorFixture fixture) {
        for (int i = 0; ; i++) {
            try {
                return new VercelProvider().open(OpenContext.of(fixture.settings()));
            } catch (AirlockException e) {
                if (i == 5) {
                    throw e;
                }
            }
        }
    }
}
