package dev.airlock.tools;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;

/**
 * How many bytes fit in one field of a tool reply, counted as they travel: a JSON string of UTF-8
 * text (with its escapes) or base64 (4 characters per 3 bytes). Clients read a reply whole into a
 * bounded buffer (the official TypeScript SDK's is 10 MiB), so a budget in raw bytes is not enough:
 * 1 MiB of control characters is 6 MiB of JSON, 1 MiB of binary is 1.33 MiB of base64.
 *
 * <p>Rules: a prefix is sent as text when it is valid UTF-8 and keeps at least as many bytes as
 * base64 would within the same budget; otherwise as base64. A text prefix never ends inside a
 * UTF-8 sequence.
 */
final class ReplyBytes {
    private ReplyBytes() {
    }

    /**
     * The longest prefix of {@code bytes[0, length)} whose encoded form takes at most
     * {@code budget} bytes of JSON, and its form.
     *
     * @param kept the number of bytes of the prefix
     * @param text whether it travels as text (else base64)
     */
    record Fit(int kept, boolean text) {
    }

    /** The bytes {@code budget} guarantees for any content: base64's, the worst encoding we choose. */
    static long guaranteed(long budget) {
        return budget / 4 * 3;
    }

    static Fit fit(byte[] bytes, int length, long budget) {
        int base64 = (int) Math.min(length, guaranteed(budget));
        int text = textPrefix(bytes, length, budget);
        if (text >= base64 && isUtf8(bytes, text)) {
            return new Fit(text, true);
        }
        return new Fit(base64, false);
    }

    /** Puts the first {@code fit.kept()} bytes under {@code key} (text) or {@code key_base64}. */
    static void put(Map<String, Object> out, String key, byte[] bytes, Fit fit) {
        if (fit.text()) {
            out.put(key, new String(bytes, 0, fit.kept(), StandardCharsets.UTF_8));
        } else {
            out.put(key + "_base64", Base64.getEncoder().encodeToString(Arrays.copyOf(bytes, fit.kept())));
        }
    }

    /** The longest prefix whose JSON-escaped text fits {@code budget}, shortened to end on a character boundary. */
    private static int textPrefix(byte[] bytes, int length, long budget) {
        long used = 0;
        int k = 0;
        while (k < length) {
            int cost = jsonCost(bytes, k, length);
            if (used + cost > budget) {
                break;
            }
            used += cost;
            k++;
        }
        while (k > 0 && k < length && (bytes[k] & 0xC0) == 0x80) {
            k--; // bytes[k] continues a sequence that started before the cut
        }
        return k;
    }

    /**
     * What byte {@code k} of UTF-8 text costs inside a JSON string, the most either of our writers
     * (Jackson for MCP, {@code dev.airlock.internal.Json} for text results) makes of it: a quote,
     * backslash, newline, return or tab 2; other control characters and DEL 6 (a backslash, "u" and four hex digits);
     * the first byte of U+2028 or U+2029 4 (the sequence's 3 bytes become 6); anything else 1
     * (non-ASCII is written raw).
     */
    static int jsonCost(byte[] bytes, int k, int length) {
        int c = bytes[k] & 0xFF;
        if (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t') {
            return 2;
        }
        if (c < 0x20 || c == 0x7F) {
            return 6;
        }
        if (c == 0xE2 && k + 2 < length && (bytes[k + 1] & 0xFF) == 0x80
                && ((bytes[k + 2] & 0xFF) == 0xA8 || (bytes[k + 2] & 0xFF) == 0xA9)) {
            return 4;
        }
        return 1;
    }

    static boolean isUtf8(byte[] bytes, int length) {
        try {
            StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes, 0, length));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
