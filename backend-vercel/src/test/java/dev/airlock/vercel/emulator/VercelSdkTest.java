package dev.airlock.vercel.emulator;

import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.settings.Settings;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Vercel's official SDK ({@code @vercel/sandbox}, pinned in src/test/sdk/package-lock.json, installed
 * by {@code npm ci} in .ci/run) against the emulator: create, writeFiles, runCommand (waited and
 * detached), readFile, mkDir, a port's domain, a snapshot and a sandbox created from it, stop. The SDK validates every answer with its own schemas.
 */
class VercelSdkTest {
    static final Path SDK = Path.of("src/test/sdk");

    @TempDir
    Path state;

    @Test
    void theOfficialSdkWorksUnchangedAgainstTheEmulator() throws Exception {
        Services.requireProgram("node", "nodejs");
        Services.require(Files.isDirectory(SDK.resolve("node_modules/@vercel/sandbox")),
                "the SDK is not installed: run `npm ci` in backend-vercel/src/test/sdk");
        CallJournal journal = new CallJournal();
        try (VercelEmulator emulator = new VercelEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0), state,
                SandboxIsolation.detect(Settings.empty()), FaultPlan.none(), journal, Settings.empty()))) {
            // The emulator made its own token and team; the SDK gets them by its environment, never argv.
            ProcessBuilder pb = new ProcessBuilder("node", "check.mjs", emulator.url().toString())
                    .directory(SDK.toFile()).redirectErrorStream(true);
            pb.environment().keySet().removeIf(k -> k.startsWith("VERCEL_"));
            pb.environment().putAll(emulator.credentials().asEnvironment());
            // Only an emulator running as root can switch commands to the sandbox's user.
            pb.environment().put("AIRLOCK_EXPECT_USER", "root".equals(System.getProperty("user.name")) ? "vercel-sandbox" : "root");
            Process p = pb.start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the SDK check did not finish");
            System.out.println(out);
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("SDK CHECK PASSED"), out);
            assertEquals(0, emulator.runningSessions(), "the SDK stopped its sandbox");
            // Six creates reach the emulator: four refused (wrong token, foreign team, 16 ports, 999 vCPUs), one
            // made, one from its snapshot.
            assertTrue(journal.entries("sandbox-create").size() == 6 && journal.entries("fs-write").size() == 1,
                    "four refused creates, one create, one from a snapshot, one write");
            assertEquals(1, journal.entries("snapshot-create").size(), "the SDK took one snapshot");
            assertTrue(journal.entries("port-route").size() >= 1, "the port's domain was served by the emulator");
            journal.assertNoDoubleDispatch();
        }
    }

    /**
     * The SDK against the vCPU allocation rate: a 429 with a long Retry-After reaches it as
     * {@code rate_limited} with the headers; a short one it waits out and sends the create again
     * (the emulator's 429 made nothing, so that makes one sandbox).
     */
    @Test
    void theOfficialSdkMeetsTheRateLimitAsOnTheService() throws Exception {
        Services.requireProgram("node", "nodejs");
        Services.require(Files.isDirectory(SDK.resolve("node_modules/@vercel/sandbox")),
                "the SDK is not installed: run `npm ci` in backend-vercel/src/test/sdk");
        java.util.Map<String, String> env = java.util.Map.of(VercelEmulator.TOKEN_VARIABLE, "sdk-rate-token-5c1e",
                VercelEmulator.TEAM_VARIABLE, "team_sdk_rate");
        CallJournal longJournal = new CallJournal();
        CallJournal shortJournal = new CallJournal();
        try (VercelEmulator longWindow = new VercelEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0),
                     Files.createDirectories(state.resolve("long")), SandboxIsolation.detect(Settings.empty()), FaultPlan.none(),
                     longJournal, Settings.of(VcpuAllocation.SETTING, "2/600"), env));
             VercelEmulator shortWindow = new VercelEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0),
                     Files.createDirectories(state.resolve("short")), SandboxIsolation.detect(Settings.empty()), FaultPlan.none(),
                     shortJournal, Settings.of(VcpuAllocation.SETTING, "2/10"), env))) {
            ProcessBuilder pb = new ProcessBuilder("node", "ratelimit.mjs", longWindow.url().toString(), shortWindow.url().toString())
                    .directory(SDK.toFile()).redirectErrorStream(true);
            pb.environment().keySet().removeIf(k -> k.startsWith("VERCEL_"));
            pb.environment().put("VERCEL_TOKEN", env.get(VercelEmulator.TOKEN_VARIABLE));
            pb.environment().put("VERCEL_TEAM_ID", env.get(VercelEmulator.TEAM_VARIABLE));
            Process p = pb.start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the SDK check did not finish");
            System.out.println(out);
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("SDK RATE LIMIT CHECK PASSED"), out);
            assertEquals(2, longJournal.entries("sandbox-create").size(), "the SDK did not resend a create told to wait 600 s");
            assertEquals(3, shortJournal.entries("sandbox-create").size(), "two made, one refused and waited out");
            assertEquals(2, shortWindow.sandboxNames().size(), "the refused create made nothing");
        }
    }
}
