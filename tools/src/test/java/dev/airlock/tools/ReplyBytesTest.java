package dev.airlock.tools;

import dev.airlock.internal.Json;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reply budget counts bytes as they travel: escaped JSON text or base64. */
class ReplyBytesTest {

    private static String field(byte[] bytes, ReplyBytes.Fit fit) {
        Map<String, Object> out = new LinkedHashMap<>();
        ReplyBytes.put(out, "x", bytes, fit);
        return Json.write(out.values().iterator().next());
    }

    @Test
    void textThatFitsIsKeptWhole() {
        byte[] b = "hello\n".getBytes(StandardCharsets.UTF_8);

        assertEquals(new ReplyBytes.Fit(6, true), ReplyBytes.fit(b, b.length, 100));
    }

    @Test
    void theBudgetCountsJsonEscapes() {
        byte[] b = "abc\"".repeat(10).getBytes(StandardCharsets.UTF_8); // 4 bytes, 5 in JSON

        ReplyBytes.Fit fit = ReplyBytes.fit(b, b.length, 20);

        assertEquals(new ReplyBytes.Fit(16, true), fit, "16 bytes of text beat base64's 15");
        assertEquals(20 + 2, field(b, fit).getBytes(StandardCharsets.UTF_8).length, "20 bytes plus the quotes");
    }

    @Test
    void aTextCutNeverSplitsACharacter() {
        byte[] b = "aé€".getBytes(StandardCharsets.UTF_8); // 1 + 2 + 3 bytes

        assertEquals(new ReplyBytes.Fit(3, true), ReplyBytes.fit(b, b.length, 5));
        assertEquals(new ReplyBytes.Fit(1, true), ReplyBytes.fit(b, b.length, 2));
    }

    @Test
    void binaryGoesAsBase64AndItsGrowthCounts() {
        byte[] b = new byte[1000];
        new Random(1).nextBytes(b);
        b[0] = (byte) 0xff; // never valid UTF-8

        ReplyBytes.Fit fit = ReplyBytes.fit(b, b.length, 400);

        assertEquals(new ReplyBytes.Fit(300, false), fit);
        Map<String, Object> out = new LinkedHashMap<>();
        ReplyBytes.put(out, "x", b, fit);
        assertEquals(400, ((String) out.get("x_base64")).length());
        assertArrayEquals(Arrays.copyOf(b, 300), Base64.getDecoder().decode((String) out.get("x_base64")));
    }

    @Test
    void controlCharactersGoAsBase64WhenThatKeepsMore() {
        byte[] zeros = new byte[10_000]; // valid UTF-8, but 6 bytes each as JSON text (backslash-u escapes)

        ReplyBytes.Fit fit = ReplyBytes.fit(zeros, zeros.length, 4000);

        assertEquals(new ReplyBytes.Fit(3000, false), fit);
        assertTrue(field(zeros, fit).length() <= 4000 + 2);
    }

    @Test
    void whateverTheContentTheEncodedFieldStaysWithinTheBudget() {
        Random random = new Random(34);
        for (int round = 0; round < 200; round++) {
            byte[] b = new byte[random.nextInt(3000)];
            if (round % 2 == 0) {
                random.nextBytes(b);
            } else {
                String alphabet = "ab\"\\\n\u0001\b\u007f\u2028é€😀";
                StringBuilder s = new StringBuilder();
                while (s.length() < b.length) {
                    s.append(alphabet.charAt(random.nextInt(alphabet.length())));
                }
                b = s.toString().getBytes(StandardCharsets.UTF_8);
            }
            long budget = 1 + random.nextInt(2000);

            ReplyBytes.Fit fit = ReplyBytes.fit(b, b.length, budget);

            int sent = field(b, fit).getBytes(StandardCharsets.UTF_8).length - 2;
            assertTrue(sent <= budget, () -> "round: " + sent + " > " + budget);
            assertTrue(fit.kept() >= Math.min(b.length, ReplyBytes.guaranteed(budget)), "at least base64's share");
            assertFalse(fit.kept() > b.length);
        }
    }
}
