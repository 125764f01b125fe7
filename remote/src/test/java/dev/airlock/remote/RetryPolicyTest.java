package dev.airlock.remote;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RetryPolicyTest {
    @Test
    void readsItsSettingsAndRefusesNonsenseInOneLine() {
        RetryPolicy p = RetryPolicy.from(Settings.of("airlock.acme.retry.max-attempts", "2",
                "airlock.acme.retry.retry-after-max", "5s", "airlock.acme.breaker.failures", "9"), "airlock.acme");
        assertEquals(2, p.maxAttempts());
        assertEquals(Duration.ofSeconds(5), p.retryAfterMax());
        assertEquals(9, p.breakerFailures());
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> RetryPolicy.from(Settings.of("airlock.acme.retry.max-attempts", "0"), "airlock.acme"));
        assertTrue(e.getMessage().startsWith("airlock.acme.retry.max-attempts must be"), e.getMessage());
    }

    @Test
    void aRetryAfterOverTheCapIsNotWaitedFor() {
        RetryPolicy p = RetryPolicy.defaults();
        assertFalse(p.retryable(CallKind.READ, WireFailure.http(429, "", Optional.of(Duration.ofMinutes(5)))));
        assertTrue(p.retryable(CallKind.READ, WireFailure.http(429, "", Optional.of(Duration.ofSeconds(59)))));
        Duration w = p.waitBefore(1, WireFailure.http(429, "", Optional.of(Duration.ofSeconds(60))), new Random(1));
        assertEquals(Duration.ofSeconds(60), w, "jitter never pushes past the cap");
        assertFalse(p.retryable(CallKind.DISPATCH, WireFailure.lost(new IOException("reset"))));
    }
}
