package dev.airlock.tck;

import dev.airlock.Capabilities;
import dev.airlock.StdinMode;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

import java.io.ByteArrayInputStream;
import java.io.InputStream;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The kit's own rules and comparisons, without a backend. */
class KitRulesTest {

    /**
     * A failure quotes its case's own promise (KitDeadline): so every case of every group has one,
     * and no two cases share one, or a failure would again read as its group's summary.
     */
    @Test
    void everyKitCaseHasAPromiseOfItsOwn() {
        java.util.Map<String, String> seen = new java.util.TreeMap<>();
        java.util.List<String> without = new java.util.ArrayList<>();
        int cases = 0;
        for (Class<?> group : EnvironmentCompatibilityKit.class.getDeclaredClasses()) {
            if (!group.isAnnotationPresent(org.junit.jupiter.api.Nested.class)) {
                continue;
            }
            for (Class<?> c = group; c != null && c != Object.class; c = c.getSuperclass()) {
                for (java.lang.reflect.Method m : c.getDeclaredMethods()) {
                    if (!m.isAnnotationPresent(Test.class)
                            && !m.isAnnotationPresent(org.junit.jupiter.params.ParameterizedTest.class)) {
                        continue;
                    }
                    cases++;
                    String name = group.getSimpleName() + "#" + m.getName();
                    Promise p = m.getAnnotation(Promise.class);
                    if (p == null || p.value().isBlank()) {
                        without.add(name);
                        continue;
                    }
                    String other = seen.put(p.value(), name);
                    assertEquals(null, other, "two cases share the promise '" + p.value() + "': " + other + ", " + name);
                }
            }
        }
        assertTrue(cases > 70, "the kit's cases were found: " + cases);
        assertEquals(java.util.List.of(), without, "kit cases without a promise of their own");
    }

    @Test
    void aHeredocBackendFailsTheCoreAsNotByteExact() {
        Capabilities heredoc = Capabilities.pipe().withStdinMode(StdinMode.HEREDOC);
        AssertionFailedError e = assertThrows(AssertionFailedError.class, () -> Remote.requireByteExact(heredoc));
        assertTrue(e.getMessage().contains("HEREDOC, which is not byte-exact"), e.getMessage());
        assertDoesNotThrow(() -> Remote.requireByteExact(Capabilities.pipe()));
        assertDoesNotThrow(() -> Remote.requireByteExact(Capabilities.pipe().withStdinMode(StdinMode.PAYLOAD)));
    }

    @Test
    void byteCheckNamesTheFirstDifferenceInAStream() {
        Sample s = Sample.generated("8 MiB", 8 * Sample.MIB, 8, 0);
        long flipAt = 5_000_000;
        InputStream altered = new InputStream() {
            private final InputStream in = s.open();
            private long pos;

            @Override
            public int read() throws java.io.IOException {
                int b = in.read();
                return b < 0 ? b : (pos++ == flipAt ? b ^ 1 : b);
            }
        };
        AssertionFailedError e = assertThrows(AssertionFailedError.class, () -> ByteCheck.assertSame(s, altered, "route"));
        assertTrue(e.getMessage().contains("first difference at byte " + flipAt), e.getMessage());
        assertDoesNotThrow(() -> ByteCheck.assertSame(s, s.open(), "route"));
    }

    @Test
    void byteCheckReportsShortAndLongOutput() {
        Sample s = Sample.of("abc", new byte[] {'a', 'b', 'c'});
        AssertionFailedError shortOne = assertThrows(AssertionFailedError.class,
                () -> ByteCheck.assertSame(s, new ByteArrayInputStream(new byte[] {'a', 'b'}), "r"));
        assertTrue(shortOne.getMessage().contains("stops short at byte 2"), shortOne.getMessage());
        AssertionFailedError longOne = assertThrows(AssertionFailedError.class,
                () -> ByteCheck.assertSame(s, new ByteArrayInputStream(new byte[] {'a', 'b', 'c', '\n'}), "r"));
        assertTrue(longOne.getMessage().contains("an extra byte 0x0a"), longOne.getMessage());
    }

    @Test
    void alternateBlocksSplitASampleInTwo() throws Exception {
        Sample whole = Sample.generated("whole", 10 * 1024 + 7, 5, 3);
        Sample even = whole.alternateBlocks(1024, 0);
        Sample odd = whole.alternateBlocks(1024, 1);
        assertEquals(whole.size(), even.size() + odd.size());
        byte[] all = whole.open().readAllBytes();
        byte[] e = even.open().readAllBytes();
        byte[] o = odd.open().readAllBytes();
        assertEquals(even.size(), e.length);
        assertEquals(odd.size(), o.length);
        for (int i = 0, ei = 0, oi = 0; i < all.length; i++) {
            assertEquals(all[i], (i / 1024) % 2 == 0 ? e[ei++] : o[oi++], "byte " + i);
        }
        assertEquals(100, whole.prefix(100).open().readAllBytes().length);
    }
}
