package dev.airlock.modal.emulator;

import dev.airlock.emulator.RateLimits;
import dev.airlock.settings.Settings;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

import java.time.Duration;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Modal's sandbox creation rate: a workspace may create so many sandboxes in a burst, refilled at
 * a steady rate (a token bucket of 150 refilled at 5 per second, as a guide to scaling Harbor
 * rollouts on Modal sandboxes describes it). Counted as {@link RateLimits}' fixed window of the same burst and the same mean
 * rate, 150 per 30 s. A create over it is refused {@code RESOURCE_EXHAUSTED} (what the SDKs raise
 * as {@code ResourceExhaustedError}) before anything is made, and does not count; the service
 * sends no retry delay the SDKs read, so none is sent here. The setting
 * {@value #SETTING}{@code =N/SECONDS} replaces the default (tests use small ones).
 */
final class SandboxCreationRate {
    private static final String PREFIX = "airlock.modal.emulator.rate-limit";
    /** The bucket's name in a {@link RateLimits.Decision}. */
    static final String BUCKET = "sandbox-create";
    /** The emulator's setting for the limit, {@code N/SECONDS}. */
    static final String SETTING = PREFIX + "." + BUCKET;
    /** The documented burst of 150 with its 5 per second refill, as one window: 150 per 30 s. */
    static final RateLimits.Limit DEFAULT = new RateLimits.Limit(150, Duration.ofSeconds(30));

    private final RateLimits limits;

    private SandboxCreationRate(RateLimits limits) {
        this.limits = limits;
    }

    /** The limit from {@value #SETTING} when set, else {@link #DEFAULT}. */
    static SandboxCreationRate from(Settings settings) {
        return from(settings, System::nanoTime);
    }

    /** As {@link #from(Settings)}, on {@code nanos} as the clock. */
    static SandboxCreationRate from(Settings settings, LongSupplier nanos) {
        return new SandboxCreationRate(RateLimits.of(Map.of(BUCKET, DEFAULT), call -> BUCKET, settings, PREFIX, nanos));
    }

    RateLimits.Limit limit() {
        return limits.limit(BUCKET).orElseThrow();
    }

    /** Counts one create, or refuses it (nothing counted, nothing made) as the service does over the rate. */
    void acquire() {
        RateLimits.Decision d = limits.acquire(BUCKET).orElseThrow();
        if (!d.allowed()) {
            throw refusal(d);
        }
    }

    /** RESOURCE_EXHAUSTED with the limit and when the window ends (emulator wording: the service's is not published). */
    static StatusRuntimeException refusal(RateLimits.Decision d) {
        long resetS = Math.max(1, (d.reset().toMillis() + 999) / 1000);
        return Status.RESOURCE_EXHAUSTED.withDescription("Sandbox creation rate limit exceeded: at most "
                + d.limit().requests() + " sandboxes per " + d.limit().window().toSeconds() + " s; try again in " + resetS + " s")
                .asRuntimeException();
    }
}
