package dev.airlock.daytona;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.Payload;
import dev.airlock.emulator.FaultPlan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Snapshots on Daytona beyond the kit: the service saves the whole filesystem, so a sandbox opened
 * from a snapshot must clear what Airlock kept there (private dirs, command output files) before
 * anything runs; a private dir elsewhere is refused in one line; a snapshot call whose answer is
 * lost is resolved by name, never sent twice.
 */
class DaytonaSnapshotTest {
    @TempDir
    Path state;

    @Test
    void aSandboxFromASnapshotHoldsNoneOfTheSourcesAirlockFiles() throws Exception {
        try (DaytonaEmulatorFixture f = new DaytonaEmulatorFixture(state, FaultPlan.none());
             Environment env = f.open(f.settings())) {
            env.files().write("/home/daytona/kept.txt", Payload.ofUtf8("kept"));
            env.start(ExecRequest.of("touch /home/daytona/started; exec sleep 60"));
            String source = DaytonaBackend.of(env).sandboxId();
            for (int i = 0; i < 300 && f.emulator.stat(source, "/home/daytona/started").isEmpty(); i++) {
                Thread.sleep(50); // until the command runs: its output files exist then
            }
            List<String> airlockFiles = new java.util.ArrayList<>(f.emulator.find(source, DaytonaSnapshot.PRIVATE_BASE, ""));
            airlockFiles.removeIf(p -> p.endsWith(DaytonaSnapshot.PRIVATE_BASE)); // the base itself: every sandbox has one
            assertTrue(airlockFiles.stream().anyMatch(p -> p.endsWith(".out")), "no running command's output file in " + airlockFiles);
            String id = env.snapshot();
            try (Environment from = f.open(f.settings(DaytonaSettings.SNAPSHOT, id))) {
                assertEquals("kept", new String(from.files().readBytes("/home/daytona/kept.txt"), java.nio.charset.StandardCharsets.UTF_8));
                String copy = DaytonaBackend.of(from).sandboxId();
                String sourceRoot = state.resolve(source).toString();
                for (String p : airlockFiles) {
                    String inSandbox = p.substring(sourceRoot.length());
                    assertTrue(f.emulator.stat(copy, inSandbox).isEmpty(), inSandbox + " of the source is in the sandbox made from its snapshot");
                }
            }
        }
    }

    @Test
    void aCommandThatEndsWhileTheSandboxIsSnapshottingKeepsItsExitCodeAndOutput() throws Exception {
        try (DaytonaEmulatorFixture f = new DaytonaEmulatorFixture(state, FaultPlan.none());
             Environment env = f.open(f.settings())) {
            java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
            f.emulator.holdSnapshots(gate);
            dev.airlock.Execution run = env.start(ExecRequest.of("touch /home/daytona/go; sleep 1; echo done; touch /home/daytona/ended; exit 3"));
            String id = DaytonaBackend.of(env).sandboxId();
            for (int i = 0; i < 600 && f.emulator.stat(id, "/home/daytona/go").isEmpty(); i++) {
                Thread.sleep(50); // until it runs
            }
            java.util.concurrent.CompletableFuture<String> snapshot = java.util.concurrent.CompletableFuture.supplyAsync(env::snapshot);
            long end = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
            while (f.emulator.sandboxState(id).filter("snapshotting"::equals).isEmpty() && System.nanoTime() < end) {
                Thread.sleep(20);
            }
            for (int i = 0; i < 600 && f.emulator.stat(id, "/home/daytona/ended").isEmpty(); i++) {
                Thread.sleep(50); // the command ends while the sandbox is snapshotting (its toolbox refuses meanwhile)
            }
            // The snapshot ends between the toolbox's refusal and the client's look at the sandbox:
            // the client then sees it started, and must poll again rather than call the command lost.
            f.emulator.beforeToolboxRefusal(path -> {
                if (!path.contains("/command/")) {
                    return; // the command's status poll, not its output's
                }
                gate.countDown();
                for (int i = 0; i < 600 && !f.emulator.sandboxState(id).orElse("").equals("started"); i++) {
                    sleepQuietly(50);
                }
            });
            dev.airlock.ExecResult r = run.await();
            assertEquals(3, r.exitCode(), "exit code of a command that ended during a snapshot: " + r.stderr().text());
            assertEquals("done\n", r.stdout().text());
            assertTrue(snapshot.get(60, java.util.concurrent.TimeUnit.SECONDS).startsWith(DaytonaSnapshot.PREFIX));
        }
    }

    @Test
    void aPrivateDirOutsideTheClearedBaseIsRefusedInOneLine() throws Exception {
        try (DaytonaEmulatorFixture f = new DaytonaEmulatorFixture(state, FaultPlan.none());
             Environment env = f.open(f.settings("airlock.profile", "eval", "airlock.run-dir", "/tmp/eval-run"))) {
            ConfigurationException e = assertThrows(ConfigurationException.class, env::snapshot);
            assertTrue(e.getMessage().contains("airlock.run-dir") && !e.getMessage().contains("\n"), e.getMessage());
            assertEquals("alive\n", env.exec(ExecRequest.of("echo alive")).stdout().text());
        }
    }

    @Test
    void aPrivateDirBaseTheUserChoseIsHonouredAndItsSnapshotRefusedInOneLine() throws Exception {
        try (DaytonaEmulatorFixture f = new DaytonaEmulatorFixture(state, FaultPlan.none());
             Environment env = f.open(f.settings("airlock.private-dir.base", "/tmp/elsewhere"))) {
            assertTrue(env.target().privateDir().startsWith("/tmp/elsewhere/"), env.target().privateDir());
            ConfigurationException e = assertThrows(ConfigurationException.class, env::snapshot);
            assertTrue(e.getMessage().contains("airlock.private-dir.base") && !e.getMessage().contains("\n"), e.getMessage());
        }
    }

    @Test
    void gcRemovesThisOwnersOldSnapshotsWhoseSandboxIsGoneAndThatNoSandboxUses() throws Exception {
        try (DaytonaEmulatorFixture f = new DaytonaEmulatorFixture(state, FaultPlan.none())) {
            String orphan;
            String used;
            String foreign = DaytonaSnapshot.PREFIX + "00000000-another-owner";
            try (Environment a = f.open(f.settings())) {
                orphan = a.snapshot();
                try (DaytonaApi api = new DaytonaApi(DaytonaSettings.from(f.settings(), java.util.Map.of()), f.settings())) {
                    api.createSnapshot(DaytonaBackend.of(a).sandboxId(), foreign);
                    for (int i = 0; i < 200 && !api.snapshot(foreign).map(s -> s.path("state").asText()).orElse("").equals("active"); i++) {
                        Thread.sleep(50);
                    }
                }
            }
            try (Environment a2 = f.open(f.settings())) {
                used = a2.snapshot();
            }
            try (Environment b = f.open(f.settings());
                 Environment fromUsed = f.open(f.settings(DaytonaSettings.SNAPSHOT, used))) {
                String live = b.snapshot();
                DaytonaProvider provider = new DaytonaProvider();
                assertEquals(List.of(), provider.gc(f.settings(), java.time.Duration.ofHours(1), false), "gc removed a young snapshot");
                assertEquals(List.of(orphan), provider.gc(f.settings(), java.time.Duration.ZERO, false));
                assertFalse(f.emulator.hasSnapshot(orphan), "gc said it removed " + orphan);
                for (String kept : List.of(used, live, foreign)) {
                    assertTrue(f.emulator.hasSnapshot(kept), "gc removed " + kept + " (in use, its sandbox alive, or not this owner's)");
                }
                assertTrue(fromUsed.exec(ExecRequest.of("true")).exitCode() == 0);
            }
        }
    }

    @Test
    void aSnapshotWhoseAnswerIsLostIsFoundByNameNotTakenTwice() throws Exception {
        try (DaytonaEmulatorFixture f = new DaytonaEmulatorFixture(state, FaultPlan.parse("sandbox-snapshot:lose", 1));
             Environment env = f.open(f.settings())) {
            String id = env.snapshot();
            assertTrue(f.emulator.hasSnapshot(id), "no snapshot " + id);
            assertEquals(1, f.journal.entries("sandbox-snapshot").size(), "the snapshot call was sent again");
            assertFalse(id.contains("\n"));
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
