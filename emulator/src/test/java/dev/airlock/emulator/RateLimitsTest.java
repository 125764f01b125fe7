package dev.airlock.emulator;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RateLimitsTest {
    @Test
    void aFixedWindowPerBucketRefusesOverTheLimitUntilItEnds() {
        AtomicLong now = new AtomicLong(1_000);
        RateLimits r = new RateLimits(Map.of("create", new RateLimits.Limit(2, Duration.ofSeconds(60))),
                call -> call.equals("sandbox-create") ? "create" : null, now::get);
        assertTrue(r.acquire("sandbox-get").isEmpty(), "a call of no limited bucket");
        assertEquals(1, r.acquire("sandbox-create").orElseThrow().remaining());
        now.addAndGet(Duration.ofSeconds(10).toNanos());
        assertEquals(0, r.acquire("sandbox-create").orElseThrow().remaining());
        RateLimits.Decision refused = r.acquire("sandbox-create").orElseThrow();
        assertFalse(refused.allowed());
        assertEquals(Duration.ofSeconds(50), refused.reset(), "the window started with the first request");
        now.addAndGet(Duration.ofSeconds(50).toNanos());
        RateLimits.Decision fresh = r.acquire("sandbox-create").orElseThrow();
        assertTrue(fresh.allowed());
        assertEquals(1, fresh.remaining());
    }

    @Test
    void aSettingReplacesALimitAndABadOneIsRefusedInOneLine() {
        RateLimits r = RateLimits.of(Map.of("create", new RateLimits.Limit(600, Duration.ofSeconds(60))), c -> "create",
                Settings.of("x.rate.create", "1/5"), "x.rate");
        assertTrue(r.acquire("c").orElseThrow().allowed());
        RateLimits.Decision d = r.acquire("c").orElseThrow();
        assertFalse(d.allowed());
        assertEquals(new RateLimits.Limit(1, Duration.ofSeconds(5)), d.limit());
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> RateLimits.of(
                Map.of("create", new RateLimits.Limit(600, Duration.ofSeconds(60))), c -> "create",
                Settings.of("x.rate.create", "lots"), "x.rate"));
        assertEquals("x.rate.create must be N/SECONDS, at most N in each window of that many seconds (for example 600/60), not lots", e.getMessage());
    }
}
