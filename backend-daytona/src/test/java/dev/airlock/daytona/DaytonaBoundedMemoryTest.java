package dev.airlock.daytona;

import dev.airlock.daytona.emulator.DaytonaEmulator;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Memory is bounded by a chunk, not by the payload: 1 GiB of stdin and a 1 GiB file in a client with a 64 MiB heap. */
class DaytonaBoundedMemoryTest {
    @TempDir
    Path state;

    @Test
    void oneGibibyteOfStdinAndAOneGibibyteFileFitInA64MiBClient() throws Exception {
        long size = Long.getLong("airlock.daytona.big.bytes", 1L << 30);
        try (DaytonaEmulator emulator = new DaytonaEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0), state,
                SandboxIsolation.detect(Settings.empty()), FaultPlan.none(), new CallJournal(), Settings.empty(),
                java.util.Map.of(DaytonaEmulator.API_KEY_VARIABLE, "big-test-key-0123456789")))) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            ProcessBuilder pb = new ProcessBuilder(List.of(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                    BigPayloadMain.class.getName(), emulator.url().toString(), Long.toString(size)))
                    .redirectErrorStream(true);
            pb.environment().put(DaytonaEmulator.API_KEY_VARIABLE, "big-test-key-0123456789"); // a key never travels in argv
            Process p = pb.start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(10, TimeUnit.MINUTES));
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("sha256 ok") && out.contains("file ok"), out);
            assertEquals(List.of(), emulator.sandboxIds(), "the client's close left its sandbox");
        }
    }
}
