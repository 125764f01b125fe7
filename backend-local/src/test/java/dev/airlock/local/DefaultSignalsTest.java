package dev.airlock.local;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The launcher restores default signal dispositions: a JVM started under {@code nohup} (SIGHUP
 * ignored, which every child inherits and no shell can undo) still runs commands that a SIGHUP ends.
 */
class DefaultSignalsTest {
    @Test
    void aHangupEndsTheCommandEvenWhenTheJvmIgnoresIt() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(List.of("sh", "-c", "trap '' HUP; exec \"$@\"", "sh", java, "-cp",
                System.getProperty("java.class.path"), IgnoredHangupMain.class.getName()))
                .redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(2, TimeUnit.MINUTES));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("exit 129"), "kill -HUP $$ must end the shell with 129: " + out);
    }
}
