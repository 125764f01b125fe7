package dev.airlock.shell;

import org.junit.jupiter.api.Test;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The kernel's random bytes: fresh on every request, spread over the whole range asked for. */
class KernelRandomTest {
    @Test
    void everyRequestGivesFreshBytes() {
        SecureRandom r = KernelRandom.create();
        byte[] a = new byte[32];
        byte[] b = new byte[32];
        r.nextBytes(a);
        r.nextBytes(b);
        assertFalse(Arrays.equals(a, b));
        assertFalse(Arrays.equals(a, new byte[32]));
        assertFalse(Arrays.equals(a, nextBytes(KernelRandom.create())), "two sources never repeat each other");
    }

    @Test
    void boundedDrawsReachEveryValue() {
        SecureRandom r = KernelRandom.create();
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 2000; i++) {
            int v = r.nextInt(62);
            assertTrue(v >= 0 && v < 62, "in range: " + v);
            seen.add(v);
        }
        assertEquals(62, seen.size());
    }

    private static byte[] nextBytes(SecureRandom r) {
        byte[] b = new byte[32];
        r.nextBytes(b);
        return b;
    }
}
