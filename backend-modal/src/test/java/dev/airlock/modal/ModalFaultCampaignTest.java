package dev.airlock.modal;

import dev.airlock.AirlockException;
import dev.airlock.DispatchOutcomeUnknownException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.emulator.CallJournal;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Random faults on every kind of call (UNAVAILABLE before the work, a lost answer after it, cut
 * output streams, slow answers), a 5 MiB stdin per run: each run ends byte-exact or in a typed
 * error, never a silent mismatch, and no exec is ever started twice.
 */
class ModalFaultCampaignTest {
    static final int RUNS = Integer.getInteger("airlock.modal.campaign.runs", 200);

    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture(String.join(",",
            // The first of each: an open's lookups are made once per JVM and kept (ModalLookups), so a later nth never comes.
            "AuthTokenGet:unavailable@nth=1",
            "AppGetOrCreate:lose@nth=1",
            "ImageGetOrCreate:unavailable@nth=1",
            "SandboxCreateV2:lose@nth=2",
            "SandboxTerminateV2:lose@nth=3",
            "SandboxGetCommandRouterAccess:unavailable@nth=1",
            "TaskExecStdioRead:cut-bytes=300000@p=0.15",
            // One rule per call name: FaultPlan draws p from (seed, rule call, n), so several "*" rules would coincide.
            "TaskExecStdinWrite:lose@p=0.03",
            "TaskExecStart:lose@p=0.01",
            "TaskExecWait:lose@p=0.03",
            "TaskExecStdioRead:lose@p=0.02",
            "TaskExecStdinStatus:delay=30ms@p=0.5",
            "*:unavailable@p=0.02"),
            Map.of("airlock.emulator.seed", "16"));

    @Test
    void everyRunIsByteExactOrATypedErrorAndNothingStartsTwice() {
        Settings s = EMULATOR.settings().with(Map.of("airlock.modal.breaker.failures", "1000",
                "airlock.modal.retry.max-attempts", "6"));
        Random random = new Random(16);
        Map<String, Integer> outcomes = new TreeMap<>();
        Environment env = null;
        int stagedChecks = 0;
        try {
            for (int run = 0; run < RUNS; run++) {
                if (env != null && run % 25 == 0) {
                    stagedChecks += assertNothingStaged(env);
                    env.close(); // a fresh sandbox now and then: creates and terminates meet faults too
                    env = null;
                }
                if (env == null) {
                    try {
                        env = new ModalProvider().open(OpenContext.of(s));
                    } catch (AirlockException e) {
                        outcomes.merge("open failed: " + e.getClass().getSimpleName(), 1, Integer::sum);
                        continue;
                    }
                }
                byte[] payload = new byte[5 * 1024 * 1024];
                random.nextBytes(payload);
                try {
                    ExecResult r = env.exec(ExecRequest.builder("cat").stdin(payload).build());
                    if (r.exitCode() == 0) {
                        if (!Arrays.equals(payload, r.stdout().bytes())) {
                            fail("run " + run + ": exit 0 but " + r.stdout().size() + " bytes came back for " + payload.length);
                        }
                        outcomes.merge("byte-exact", 1, Integer::sum);
                    } else {
                        // A non-zero exit must come with its reason; it is never a silent success.
                        outcomes.merge("exit " + r.exitCode(), 1, Integer::sum);
                    }
                } catch (DispatchOutcomeUnknownException e) {
                    outcomes.merge("outcome unknown (not resent)", 1, Integer::sum);
                } catch (AirlockException e) {
                    outcomes.merge(e.getClass().getSimpleName(), 1, Integer::sum);
                    if (e instanceof dev.airlock.EnvironmentClosedException || e instanceof dev.airlock.BackendUnavailableException) {
                        env.close();
                        env = null;
                    }
                }
            }
            if (env != null) {
                stagedChecks += assertNothingStaged(env);
            }
        } finally {
            if (env != null) {
                env.close();
            }
        }
        assertTrue(stagedChecks > 0, "the staging dir was never read back");
        CallJournal journal = EMULATOR.served.journal();
        System.out.println("[modal-campaign] " + RUNS + " runs of 5 MiB: " + outcomes);
        System.out.println("[modal-campaign] calls and faults:\n" + EMULATOR.served.faults().report());
        journal.assertNoDoubleDispatch();
        assertTrue(outcomes.getOrDefault("byte-exact", 0) > RUNS / 2, "too few clean runs: " + outcomes);
        assertTrue(EMULATOR.served.faults().faultCounts().keySet().containsAll(List.of("AuthTokenGet", "AppGetOrCreate",
                "ImageGetOrCreate", "SandboxCreateV2", "SandboxTerminateV2", "TaskExecStart", "TaskExecStdinWrite",
                "TaskExecStdioRead", "TaskExecWait")), "faults did not reach every exec call: " + EMULATOR.served.faults().faultCounts());
        assertEquals(0, ((dev.airlock.modal.emulator.ModalEmulator) EMULATOR.served.emulator()).liveSandboxes(),
                "a sandbox was left running");
    }

    /**
     * No staged file in the sandbox's staging dir: stdin is streamed, never staged, whatever the
     * faults did. Returns 1 once the dir was read (a fault on the listing itself is tried again), 0 if it never could be.
     */
    private static int assertNothingStaged(Environment env) {
        for (int attempt = 0; attempt < 5; attempt++) {
            List<String> left;
            try {
                left = env.files().list(env.target().stagingDir()).stream().map(dev.airlock.FileStat::name)
                        .filter(n -> n.startsWith(".airlock-")).toList();
            } catch (AirlockException e) {
                continue; // a fault hit the listing, not the runs
            }
            assertEquals(List.of(), left, "staged files left in " + env.target().stagingDir());
            return 1;
        }
        return 0;
    }
}
