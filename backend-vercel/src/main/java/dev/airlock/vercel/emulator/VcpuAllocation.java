package dev.airlock.vercel.emulator;

import dev.airlock.emulator.RateLimits;
import dev.airlock.settings.Settings;

import java.time.Duration;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Vercel Sandbox's vCPU allocation rate: a team may give so many vCPUs to new sandboxes in each
 * window (Pro: 400 per minute; Hobby: 40 per 10 minutes), counted as {@link RateLimits}' fixed
 * window, a create weighing its vCPUs. A create whose vCPUs do not fit in what is left is refused
 * (it does not count) until the window ends. The setting {@value #SETTING}{@code =VCPUS/SECONDS}
 * replaces the default (tests use small ones).
 */
final class VcpuAllocation {
    private static final String PREFIX = "airlock.vercel.emulator.rate-limit";
    /** The bucket's name in a {@link RateLimits.Decision}. */
    static final String BUCKET = "vcpu-allocation";
    /** The emulator's setting for the limit, {@code VCPUS/SECONDS}. */
    static final String SETTING = PREFIX + "." + BUCKET;
    /**
     * The Pro plan's documented rate, the plan this emulator models (its vCPU and lifetime limits
     * are Pro's too): Hobby's 40 per 10 minutes would refuse the kit's own run, which creates far
     * more than 20 two-vCPU sandboxes in 10 minutes.
     */
    static final RateLimits.Limit PRO = new RateLimits.Limit(400, Duration.ofSeconds(60));

    private final RateLimits limits;

    private VcpuAllocation(RateLimits limits) {
        this.limits = limits;
    }

    /** The limit from {@value #SETTING} when set, else {@link #PRO}. */
    static VcpuAllocation from(Settings settings) {
        return from(settings, System::nanoTime);
    }

    /** As {@link #from(Settings)}, on {@code nanos} as the clock. */
    static VcpuAllocation from(Settings settings, LongSupplier nanos) {
        return new VcpuAllocation(RateLimits.of(Map.of(BUCKET, PRO), call -> BUCKET, settings, PREFIX, nanos));
    }

    RateLimits.Limit limit() {
        return limits.limit(BUCKET).orElseThrow();
    }

    /** Counts a create of {@code vcpus} against the window, or refuses it when they do not fit. */
    RateLimits.Decision acquire(int vcpus) {
        return limits.acquire(BUCKET, vcpus).orElseThrow();
    }
}
