package dev.airlock.daytona;

import dev.airlock.daytona.emulator.DaytonaEmulator;
import dev.airlock.emulator.FaultPlan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Memory is bounded by a chunk, not by the payload: 512 MiB of stdin and a 512 MiB file, each eight
 * times the heap, through a client with a 64 MiB heap ({@code -Dairlock.daytona.big.bytes} for more).
 */
class DaytonaBoundedMemoryTest {
    @TempDir
    Path state;

    @Test
    void stdinAndAFileEightTimesTheHeapFitInA64MiBClient() throws Exception {
        long size = Long.getLong("airlock.daytona.big.bytes", 512L << 20);
        try (DaytonaEmulatorFixture fixture = new DaytonaEmulatorFixture(state, FaultPlan.none())) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            ProcessBuilder pb = new ProcessBuilder(List.of(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                    BigPayloadMain.class.getName(), fixture.emulator.url().toString(), Long.toString(size)))
                    .redirectErrorStream(true);
            pb.environment().put(DaytonaEmulator.API_KEY_VARIABLE, DaytonaEmulatorFixture.KEY); // a key never travels in argv
            Process p = pb.start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(10, TimeUnit.MINUTES));
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("sha256 ok") && out.contains("file ok"), out);
            assertEquals(List.of(), fixture.emulator.sandboxIds(), "the client's close left its sandbox");
        }
    }
}
