package dev.airlock.daytona;

import dev.airlock.daytona.emulator.DaytonaEmulator;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Daytona's official TS SDK ({@code @daytona/sdk}, pinned in {@code src/test/sdk/package.json})
 * against the emulator, unchanged: create, execute, upload, download, a session's shell state and
 * input, preview links (standard and signed), a snapshot and a sandbox made from it, delete. Needs node and
 * {@code npm ci} in {@code src/test/sdk} (as {@code .ci/run} does); skips with the reason when
 * they are absent, fails instead under {@code AIRLOCK_REQUIRE_SERVICES=1}.
 */
class DaytonaSdkTest {
    private static final Path SDK = Path.of("src/test/sdk").toAbsolutePath();

    @TempDir
    Path state;

    @Test
    void theOfficialSdkWorksAgainstTheEmulatorUnchanged() throws Exception {
        String node = findNode();
        CallJournal journal = new CallJournal();
        try (DaytonaEmulator emulator = new DaytonaEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0),
                state, SandboxIsolation.detect(Settings.empty()), FaultPlan.none(), journal, Settings.empty()))) {
            // No DAYTONA_API_KEY given to the emulator: it made its own, which the SDK gets by its environment.
            ProcessBuilder pb = new ProcessBuilder(node, "check.js").directory(SDK.toFile()).redirectErrorStream(true);
            pb.environment().keySet().removeIf(k -> k.startsWith("DAYTONA_"));
            pb.environment().put("DAYTONA_API_URL", emulator.url().toString());
            pb.environment().put("DAYTONA_API_KEY", emulator.credentials().value(DaytonaEmulator.API_KEY_VARIABLE));
            Process p = pb.start();
            byte[] out = p.getInputStream().readAllBytes();
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the SDK check did not end");
            String text = new String(out, StandardCharsets.UTF_8);
            System.out.println(text);
            assertEquals(0, p.exitValue(), "the SDK check failed:\n" + text);
            for (String step : new String[] {"refused 401", "over-limit 403", "unknown-snapshot 400", "create", "execute",
                    "upload", "download", "session state", "session input", "preview link", "signed preview", "snapshot", "delete"}) {
                assertTrue(text.contains("ok " + step), "no 'ok " + step + "' in:\n" + text);
            }
            assertTrue(emulator.sandboxIds().isEmpty(), "the SDK's delete left a sandbox");
            assertEquals(0, journal.entries("unknown").size(), "the SDK called routes the emulator lacks: " + journal.entries("unknown"));
        }
    }

    private static String findNode() {
        String why = null;
        String node = null;
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, "node"))) {
                node = Path.of(dir, "node").toString();
                break;
            }
        }
        if (node == null) {
            why = "node is not on PATH";
        } else if (!Files.isDirectory(SDK.resolve("node_modules/@daytona/sdk"))) {
            why = "run `npm ci` in " + SDK + " first (see .ci/run)";
        }
        if (why != null) {
            if ("1".equals(System.getenv("AIRLOCK_REQUIRE_SERVICES"))) {
                Assertions.fail("the official Daytona SDK check cannot run: " + why + " (AIRLOCK_REQUIRE_SERVICES=1)");
            }
            System.out.println("SKIP: the official Daytona SDK check: " + why);
            Assumptions.abort(why);
        }
        return node;
    }
}
