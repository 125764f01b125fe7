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

    /**
     * A plugin that moves a payload through a helper's argv encoded (a chunk of base64, say) is
     * caught too: each encoding of the secret, wherever the secret sits in the encoded chunk.
     */
    @Test
    void aSecretEncodedInsideALargerChunkIsFoundAtEveryAlignment() {
        byte[] secret = ("kit-argv-" + Long.toHexString(System.nanoTime())).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Map<String, byte[]> needles = ArgvScan.encodings("the payload", secret);
        java.util.Random random = new java.util.Random(7);
        for (int before = 0; before < 6; before++) {
            byte[] chunk = new byte[before + secret.length + 5];
            random.nextBytes(chunk);
            System.arraycopy(secret, 0, chunk, before, secret.length);
            for (String encoded : new String[] {java.util.Base64.getEncoder().encodeToString(chunk),
                    java.util.Base64.getUrlEncoder().encodeToString(chunk), java.util.HexFormat.of().formatHex(chunk),
                    java.util.HexFormat.of().withUpperCase().formatHex(chunk)}) {
                byte[] argv = ("helper\0" + encoded + "\0").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                assertTrue(needles.values().stream().anyMatch(n -> ArgvScan.indexOf(argv, n) >= 0),
                        "the secret at byte " + before + " of the chunk was not found in " + encoded);
            }
        }
    }

    @Test
    void aSecretInAnArgvInBase64IsCaught() throws Exception {
        Services.require(Services.find("strace").isPresent(), "strace is not installed (apt-get install strace)");
        String secret = "kit-argv-" + Long.toHexString(System.nanoTime());
        String encoded = java.util.Base64.getEncoder().encodeToString(("chunk:" + secret + ":end").getBytes(
                java.nio.charset.StandardCharsets.UTF_8));
        ArgvScan scan = new ArgvScan(Map.of("the payload", secret), "kit-sighting-unused");
        try {
            assertEquals(0, new ProcessBuilder("/bin/sh", "-c", "printf %s \"$0\" >/dev/null", encoded).start().waitFor());
        } finally {
            scan.close();
        }
        Set<String> hits = scan.hits();
        assertTrue(hits.stream().anyMatch(h -> h.startsWith("the payload, base64-encoded")), hits + "; " + scan.summary());
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
