package dev.airlock.local;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Memory is bounded by a chunk, not by the payload: 1 GiB and 16 x 8 MiB in a JVM with a 64 MiB heap. */
class BoundedMemoryTest {
    @Test
    void oneGibibyteThroughSha256sumAndSixteenConcurrentOutputsFitIn64MiB() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(List.of(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                BigPayloadMain.class.getName(), Long.toString(1L << 30)))
                .redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(10, TimeUnit.MINUTES));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("sha256 ok") && out.contains("concurrent ok"), out);
    }
}
