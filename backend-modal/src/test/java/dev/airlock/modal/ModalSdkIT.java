package dev.airlock.modal;

import dev.airlock.emulator.Emulators;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Modal's official JS SDK (npm {@code modal}, pinned in src/test/sdk/package-lock.json) runs
 * unchanged against the emulator in both sandbox families: create, exec with binary stdin, file
 * write and read, lookup by name, tags, terminate; and over the sandbox creation rate its create is
 * refused RESOURCE_EXHAUSTED (ratelimit.mjs). Needs node and {@code npm ci} in src/test/sdk; skips with the reason
 * when they are missing, fails instead under AIRLOCK_REQUIRE_SERVICES=1.
 */
final class ModalSdkIT {

    @ParameterizedTest(name = "sandbox family V{0}")
    @ValueSource(ints = {2, 1})
    void theOfficialSdkCannotTellTheEmulatorFromTheService(int family) throws Exception {
        Path sdk = Path.of(System.getProperty("airlock.modal.sdk-dir", "src/test/sdk"));
        String node = requireNode(sdk);
        // No token pair given to the emulator: it makes its own, which the SDK gets by its environment.
        try (Emulators.Served served = Emulators.start("modal", "127.0.0.1:0", Settings.empty(), getClass().getClassLoader())) {
            ProcessBuilder pb = new ProcessBuilder(node, "check.mjs").directory(sdk.toFile()).redirectErrorStream(true);
            Map<String, String> env = pb.environment();
            env.keySet().removeIf(k -> k.startsWith("MODAL_"));
            env.put("MODAL_SERVER_URL", served.emulator().url().toString());
            env.putAll(served.emulator().credentials().asEnvironment());
            env.put("MODAL_SANDBOX_V2", family == 2 ? "1" : "0");
            env.put("HOME", Files.createTempDirectory("modal-sdk-home").toString()); // no ~/.modal.toml of the user's
            Process p = pb.start();
            byte[] out = p.getInputStream().readAllBytes();
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the SDK check did not finish");
            String text = new String(out, StandardCharsets.UTF_8);
            System.out.println(text);
            assertEquals(0, p.exitValue(), "the SDK check failed:\n" + text);
            assertTrue(text.strip().endsWith("ok"), text);
            List<String> calls = served.journal().entries().stream().map(e -> e.call()).distinct().toList();
            String create = family == 2 ? "SandboxCreateV2" : "SandboxCreate";
            String terminate = family == 2 ? "SandboxTerminateV2" : "SandboxTerminate";
            String v = family == 2 ? "V2" : "";
            assertTrue(calls.containsAll(List.of("AuthTokenGet", "AppGetOrCreate", "ImageGetOrCreate", create, "TaskExecStart",
                    terminate, "SandboxGetFromName" + v, "SandboxTagsSet" + v, "SandboxTagsGet" + v)), "calls served: " + calls);
            served.journal().assertNoDoubleDispatch();
        }
    }

    /**
     * Over the sandbox creation rate (made 1 by the emulator's setting) the SDK's create gets
     * RESOURCE_EXHAUSTED, as from the service, and does not send it again.
     */
    @org.junit.jupiter.api.Test
    void theOfficialSdkIsRefusedResourceExhaustedOverTheCreationRate() throws Exception {
        Path sdk = Path.of(System.getProperty("airlock.modal.sdk-dir", "src/test/sdk"));
        String node = requireNode(sdk);
        Settings rate = Settings.of("airlock.modal.emulator.rate-limit.sandbox-create", "1/600");
        try (Emulators.Served served = Emulators.start("modal", "127.0.0.1:0", rate, getClass().getClassLoader())) {
            ProcessBuilder pb = new ProcessBuilder(node, "ratelimit.mjs").directory(sdk.toFile()).redirectErrorStream(true);
            Map<String, String> env = pb.environment();
            env.keySet().removeIf(k -> k.startsWith("MODAL_"));
            env.put("MODAL_SERVER_URL", served.emulator().url().toString());
            env.putAll(served.emulator().credentials().asEnvironment());
            env.put("HOME", Files.createTempDirectory("modal-sdk-home").toString());
            Process p = pb.start();
            byte[] out = p.getInputStream().readAllBytes();
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the SDK check did not finish");
            String text = new String(out, StandardCharsets.UTF_8);
            System.out.println(text);
            assertEquals(0, p.exitValue(), "the SDK check failed:\n" + text);
            assertTrue(text.strip().endsWith("ok"), text);
            assertEquals(2, served.journal().entries().stream().filter(e -> e.call().startsWith("SandboxCreate")).count(),
                    "the refused create was not sent again");
        }
    }

    private static String requireNode(Path sdk) throws IOException, InterruptedException {
        String reason = null;
        try {
            Process v = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            v.getInputStream().readAllBytes();
            if (!v.waitFor(20, TimeUnit.SECONDS) || v.exitValue() != 0) {
                reason = "node does not run";
            }
        } catch (IOException e) {
            reason = "node is not on PATH";
        }
        if (reason == null && !Files.isDirectory(sdk.resolve("node_modules/modal"))) {
            reason = "the pinned SDK is not installed: run `npm ci` in " + sdk;
        }
        if (reason != null) {
            if ("1".equals(System.getenv("AIRLOCK_REQUIRE_SERVICES"))) {
                Assertions.fail(reason + " (AIRLOCK_REQUIRE_SERVICES=1)");
            }
            System.out.println("SKIP: " + reason);
            Assumptions.abort(reason);
        }
        return "node";
    }
}
