package dev.airlock.remote;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

class RetryAfterTest {
    static final Instant NOW = Instant.parse("2026-10-21T07:28:00Z");

    @Test
    void secondsDatesAndGarbage() {
        assertEquals(Optional.of(Duration.ofSeconds(30)), RetryAfter.parse("30", NOW));
        assertEquals(Optional.of(Duration.ofMillis(1500)), RetryAfter.parse(" 1.5 ", NOW));
        assertEquals(Optional.of(Duration.ofSeconds(90)), RetryAfter.parse("Wed, 21 Oct 2026 07:29:30 GMT", NOW));
        assertEquals(Optional.of(Duration.ZERO), RetryAfter.parse("Wed, 21 Oct 2026 07:00:00 GMT", NOW), "past date");
        assertEquals(Optional.empty(), RetryAfter.parse("-5", NOW));
        assertEquals(Optional.empty(), RetryAfter.parse("soon", NOW));
        assertEquals(Optional.empty(), RetryAfter.parse("", NOW));
        assertEquals(Optional.empty(), RetryAfter.parse(null, NOW));
    }

    @Test
    void bucketHeaderWinsForItsBucketElsePlainElseLongestBucket() {
        Map<String, String> h = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        h.put("retry-after-sandbox-create", "12");
        h.put("Retry-After-sandbox-list", "40");
        List<String> names = List.copyOf(h.keySet());
        assertEquals(Optional.of(Duration.ofSeconds(12)), RetryAfter.fromHeaders(h::get, names, "sandbox-create", NOW));
        assertEquals(Optional.of(Duration.ofSeconds(40)), RetryAfter.fromHeaders(h::get, names, "", NOW),
                "unknown bucket: the longest wait asked");
        h.put("Retry-After", "3");
        assertEquals(Optional.of(Duration.ofSeconds(3)), RetryAfter.fromHeaders(h::get, List.copyOf(h.keySet()), "other", NOW));
        assertEquals(Optional.empty(), RetryAfter.fromHeaders(k -> null, List.of(), "x", NOW));
    }
}
