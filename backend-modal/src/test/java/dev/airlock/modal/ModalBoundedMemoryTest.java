package dev.airlock.modal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Streamed stdin is bounded by its 1 MiB chunk, not by the payload: 1 GiB through a client JVM with a 64 MiB heap. */
class ModalBoundedMemoryTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    @Test
    void oneGibibyteOfStdinThroughAClientWithA64MiBHeap() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(List.of(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                ModalBigStdinMain.class.getName(), EMULATOR.served.emulator().url().toString(), Long.toString(1L << 30)))
                .redirectErrorStream(true);
        pb.environment().put("MODAL_TOKEN_ID", ModalFixture.TOKEN_ID);
        pb.environment().put("MODAL_TOKEN_SECRET", ModalFixture.TOKEN_SECRET);
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(10, TimeUnit.MINUTES));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("sha256 ok"), out);
    }
}
