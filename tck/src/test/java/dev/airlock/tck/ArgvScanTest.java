package dev.airlock.tck;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The argv check sees a process that lives a millisecond, which polling /proc would miss. */
class ArgvScanTest {

    @Test
    void aShortLivedProcessWithASecretInItsArgvIsCaught() throws Exception {
        Services.require(Services.find("strace").isPresent(), "strace is not installed (apt-get install strace)");
        String secret = "kit-argv-" + Long.toHexString(System.nanoTime());
        ArgvScan scan = new ArgvScan(Map.of("the payload", secret), "kit-sighting-unused");
        try {
            // like a plugin that stages stdin with printf in argv: over in about a millisecond
            for (int i = 0; i < 3; i++) {
                Process p = new ProcessBuilder("/bin/sh", "-c", "printf %s \"$0\" >/dev/null", secret).start();
                assertEquals(0, p.waitFor());
            }
        } finally {
            scan.close();
        }
        Set<String> hits = scan.hits();
        assertTrue(hits.stream().anyMatch(h -> h.startsWith("the payload in the argv of an exec of /bin/sh (traced)")),
                hits + "; " + scan.summary());
        assertTrue(hits.stream().noneMatch(h -> h.contains(secret)), "a hit names the secret's label, never its value");
        assertTrue(scan.summary().contains("execve traced"), scan.summary());
    }

    @Test
    void innocentExecsAreNoHits() throws Exception {
        Services.require(Services.find("strace").isPresent(), "strace is not installed (apt-get install strace)");
        ArgvScan scan = new ArgvScan(Map.of("the payload", "kit-argv-never-" + Long.toHexString(System.nanoTime())), "x");
        try {
            assertEquals(0, new ProcessBuilder("/bin/true").start().waitFor());
        } finally {
            scan.close();
        }
        assertEquals(Set.of(), scan.hits());
    }
}
