package dev.airlock.remote;

import dev.airlock.AirlockException;
import dev.airlock.BackendUnavailableException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CircuitBreakerTest {
    static final Service S = new Service("Daytona", "DAYTONA_API_KEY", "airlock.daytona.api-url");

    @Test
    void aDeadControlPlaneEndsInOneClearUnavailableInsteadOfMoreRetries() {
        RemoteCalls calls = new RemoteCalls(S, RetryPolicy.defaults().withSleeper(d -> { })
                .withBreaker(3, Duration.ofMinutes(5)));
        AtomicInteger sent = new AtomicInteger();
        AirlockException first = assertThrows(AirlockException.class, () -> calls.call(CallKind.STATUS, "sandbox-get",
                Resource.sandbox("s"), () -> {
                    sent.incrementAndGet();
                    throw WireFailure.notSent(new ConnectException("Connection refused"));
                }));
        // Three failures open the breaker during the first call's retries; the fourth attempt is never made.
        assertEquals(3, sent.get());
        assertTrue(first.getMessage().contains("failed the last 3 calls"), first.getMessage());
        BackendUnavailableException next = assertThrows(BackendUnavailableException.class,
                () -> calls.dispatch("exec", Resource.sandbox("s"), () -> {
                    sent.incrementAndGet();
                    return "ran";
                }));
        assertEquals(3, sent.get(), "an open breaker sends nothing, a dispatch included");
        assertTrue(next.getMessage().contains("check airlock.daytona.api-url"), next.getMessage());
    }

    @Test
    void refusalsAndRateLimitsDoNotOpenIt() {
        RemoteCalls calls = new RemoteCalls(S, RetryPolicy.defaults().withSleeper(d -> { }).withBreaker(2, Duration.ofMinutes(5)));
        for (int i = 0; i < 5; i++) {
            assertThrows(AirlockException.class, () -> calls.call(CallKind.READ, "r", Resource.none(), () -> {
                throw WireFailure.http(404, "", Optional.empty());
            }));
            assertThrows(AirlockException.class, () -> calls.call(CallKind.READ, "r", Resource.none(), () -> {
                throw WireFailure.http(429, "", Optional.of(Duration.ofHours(1)));
            }));
        }
        assertEquals("ok", calls.call(CallKind.READ, "r", Resource.none(), () -> "ok"));
    }

    @Test
    void interruptStopsTheRetryAndKeepsTheFlag() {
        RemoteCalls calls = new RemoteCalls(S, RetryPolicy.defaults().withSleeper(d -> {
            throw new InterruptedException();
        }));
        AtomicInteger sent = new AtomicInteger();
        assertThrows(AirlockException.class, () -> calls.call(CallKind.READ, "r", Resource.none(), () -> {
            sent.incrementAndGet();
            throw WireFailure.lost(new IOException("reset"));
        }));
        assertTrue(Thread.interrupted());
        assertEquals(1, sent.get());
    }
}
