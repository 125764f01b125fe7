package dev.airlock.vercel;

import dev.airlock.emulator.FaultPlan;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Memory is bounded by a part, not by the file: 512 MiB (eight times the heap) written, read and
 * staged by a client with a 64 MiB heap ({@code -Dairlock.vercel.large.bytes} for more).
 */
class VercelLargeFileTest {
    @Test
    void aFileEightTimesTheHeapWrittenReadAndStagedWithA64MiBHeap() throws Exception {
        try (VercelEmulatorFixture fixture = new VercelEmulatorFixture(FaultPlan.none())) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(List.of(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                    LargeFileMain.class.getName(), fixture.emulator.url().toString(), Long.toString(Long.getLong("airlock.vercel.large.bytes", 512L << 20))))
                    .redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(15, TimeUnit.MINUTES), "a hang guard");
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("the written file: sha256 ok") && out.contains("the file read back: sha256 ok")
                    && out.contains("the file written from a local file: sha256 ok")
                    && out.contains("the staged stdin: sha256 ok") && out.contains("large ok"), out);
            assertEquals(0, fixture.emulator.runningSessions(), "the sandbox stopped");
            assertTrue(fixture.emulator.sandboxNames().isEmpty(), "the sandbox was deleted");
        }
    }
}
