package dev.airlock.cli;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The text content of a long result: a summary, so the output travels once. */
class McpServerMainTest {

    @Test
    void aLongResultsTextKeepsTheShortFieldsAndNamesTheLengthOfTheLongOnes() {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("exit_code", 0);
        result.put("stdout", "x".repeat(1_000_000));
        result.put("stdout_dropped", 8_000_000L);
        result.put("stdout_file", "/tmp/airlock-output/a.stdout");

        String text = McpServerMain.summary(result, 1_000_090);

        assertEquals("The full result (1000090 characters of JSON) is in structuredContent; in short: {\"exit_code\":0,"
                + "\"stdout\":\"(1000000 characters, in structuredContent)\",\"stdout_dropped\":8000000,"
                + "\"stdout_file\":\"/tmp/airlock-output/a.stdout\"}", text);
        assertTrue(text.length() < McpServerMain.INLINE_JSON_CHARS);
    }
}
