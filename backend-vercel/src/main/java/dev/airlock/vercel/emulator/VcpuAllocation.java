package dev.airlock.vercel.emulator;

import dev.airlock.ConfigurationException;
import dev.airlock.emulator.RateLimits;
import dev.airlock.settings.Settings;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Vercel Sandbox's vCPU allocation rate: a team may give so many vCPUs to new sandboxes in each
 * window (Pro: 400 per minute; Hobby: 40 per 10 minutes), counted as a fixed window that starts
 * with the window's first create. A create whose vCPUs do not fit in what is left is refused (it
 * does not count) until the window ends.
 *
 * <p>This is {@link RateLimits}' fixed window with a weight (a create counts its vCPUs, not 1),
 * which {@code RateLimits} does not take; it answers in {@code RateLimits}' own {@link RateLimits.Decision}.
 * The setting {@value #SETTING}{@code =N/SECONDS} replaces the default (tests use small ones).
 */
final class VcpuAllocation {
    /** The emulator's setting for the limit, {@code VCPUS/SECONDS}. */
    static final String SETTING = "airlock.vercel.emulator.rate-limit.vcpu-allocation";
    /** The bucket's name in a {@link RateLimits.Decision}. */
    static final String BUCKET = "vcpu-allocation";
    /**
     * The Pro plan's documented rate, the plan this emulator models (its vCPU and lifetime limits
     * are Pro's too): Hobby's 40 per 10 minutes would refuse the kit's own run, which creates far
     * more than 20 two-vCPU sandboxes in 10 minutes.
     */
    static final RateLimits.Limit PRO = new RateLimits.Limit(400, Duration.ofSeconds(60));

    private final RateLimits.Limit limit;
    private final LongSupplier nanos;
    private long start;
    private int used;
    private boolean started;

    VcpuAllocation(RateLimits.Limit limit, LongSupplier nanos) {
        this.limit = Objects.requireNonNull(limit);
        this.nanos = Objects.requireNonNull(nanos);
    }

    /** The limit from {@value #SETTING} when set, else {@link #PRO}. */
    static VcpuAllocation from(Settings settings) {
        RateLimits.Limit limit = settings.get(SETTING).filter(v -> !v.isBlank()).map(VcpuAllocation::parse).orElse(PRO);
        return new VcpuAllocation(limit, System::nanoTime);
    }

    static RateLimits.Limit parse(String value) {
        String[] parts = value.trim().split("/");
        try {
            if (parts.length == 2) {
                int n = Integer.parseInt(parts[0].trim());
                long seconds = Long.parseLong(parts[1].trim());
                if (n >= 1 && seconds >= 1) {
                    return new RateLimits.Limit(n, Duration.ofSeconds(seconds));
                }
            }
        } catch (NumberFormatException e) {
            // the message below says what is expected
        }
        throw new ConfigurationException(SETTING + " must be VCPUS/SECONDS (for example 400/60), not " + value);
    }

    RateLimits.Limit limit() {
        return limit;
    }

    /** Counts a create of {@code vcpus} against the window, or refuses it when they do not fit. */
    synchronized RateLimits.Decision acquire(int vcpus) {
        long now = nanos.getAsLong();
        long windowNanos = limit.window().toNanos();
        if (!started || now - start >= windowNanos) {
            started = true;
            start = now;
            used = 0;
        }
        Duration reset = Duration.ofNanos(start + windowNanos - now);
        if (used + vcpus > limit.requests()) {
            return new RateLimits.Decision(BUCKET, limit, limit.requests() - used, reset, false);
        }
        used += vcpus;
        return new RateLimits.Decision(BUCKET, limit, limit.requests() - used, reset, true);
    }
}
