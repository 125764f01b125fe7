package dev.airlock.emulator;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * A service's documented rate limits: so many requests per window in each bucket of calls, as
 * fixed windows that start with a bucket's first request. A request over its bucket's limit is
 * refused (it does not count) until the window ends; {@link Decision#reset()} says how long that
 * is, which the service sends as its Retry-After. A request may weigh more than one (Vercel counts
 * a create's vCPUs). A setting {@code PREFIX.BUCKET=N/SECONDS} replaces a bucket's limit (tests
 * use small ones).
 */
public final class RateLimits {
    /** At most {@code requests} in each {@code window}. */
    public record Limit(int requests, Duration window) {
        public Limit {
            if (requests < 1 || window.isZero() || window.isNegative()) {
                throw new IllegalArgumentException("a limit needs at least 1 request in a positive window");
            }
        }
    }

    /** What a request got: its bucket, the bucket's limit, what is left of it, and when the window ends. */
    public record Decision(String bucket, Limit limit, int remaining, Duration reset, boolean allowed) {
    }

    private static final class Window {
        long start;
        int count;
    }

    private final Map<String, Limit> limits;
    private final Function<String, String> bucketOf;
    private final LongSupplier nanos;
    private final Map<String, Window> windows = new LinkedHashMap<>();

    /**
     * {@code defaults} per bucket, each replaced by the setting {@code prefix + "." + bucket} when
     * set; {@code bucketOf} maps a call's name to its bucket (a bucket with no limit is not limited).
     */
    public static RateLimits of(Map<String, Limit> defaults, Function<String, String> bucketOf, Settings settings, String prefix) {
        Map<String, Limit> limits = new LinkedHashMap<>(defaults);
        for (String bucket : defaults.keySet()) {
            String key = prefix + "." + bucket;
            settings.get(key).filter(v -> !v.isBlank()).ifPresent(v -> limits.put(bucket, parse(key, v)));
        }
        return new RateLimits(limits, bucketOf, System::nanoTime);
    }

    /** As {@link #of}, with {@code nanos} as the clock (tests move it by hand). */
    public static RateLimits of(Map<String, Limit> defaults, Function<String, String> bucketOf, Settings settings, String prefix,
                                LongSupplier nanos) {
        RateLimits r = of(defaults, bucketOf, settings, prefix);
        return new RateLimits(r.limits, bucketOf, nanos);
    }

    RateLimits(Map<String, Limit> limits, Function<String, String> bucketOf, LongSupplier nanos) {
        this.limits = Map.copyOf(limits);
        this.bucketOf = Objects.requireNonNull(bucketOf);
        this.nanos = Objects.requireNonNull(nanos);
    }

    /** {@code N/SECONDS}: at most N (requests, or their weight) in each window of that many seconds. */
    static Limit parse(String key, String value) {
        String[] parts = value.trim().split("/");
        try {
            if (parts.length == 2) {
                int n = Integer.parseInt(parts[0].trim());
                long seconds = Long.parseLong(parts[1].trim());
                if (n >= 1 && seconds >= 1) {
                    return new Limit(n, Duration.ofSeconds(seconds));
                }
            }
        } catch (NumberFormatException e) {
            // the message below says what is expected
        }
        throw new ConfigurationException(key + " must be N/SECONDS, at most N in each window of that many seconds"
                + " (for example 600/60), not " + value);
    }

    /** The limit of {@code bucket}, if it has one. */
    public Optional<Limit> limit(String bucket) {
        return Optional.ofNullable(limits.get(bucket));
    }

    /** Counts the request of {@code call} against its bucket; empty when the bucket has no limit. */
    public Optional<Decision> acquire(String call) {
        return acquire(call, 1);
    }

    /**
     * Counts a request of {@code call} weighing {@code weight} against its bucket; refused (and
     * not counted) when it does not fit in what is left of the window. Empty when the bucket has
     * no limit.
     */
    public synchronized Optional<Decision> acquire(String call, int weight) {
        if (weight < 1) {
            throw new IllegalArgumentException("a request weighs at least 1, not " + weight);
        }
        String bucket = bucketOf.apply(call);
        Limit limit = bucket == null ? null : limits.get(bucket);
        if (limit == null) {
            return Optional.empty();
        }
        long now = nanos.getAsLong();
        Window w = windows.computeIfAbsent(bucket, b -> {
            Window fresh = new Window();
            fresh.start = now;
            return fresh;
        });
        long windowNanos = limit.window().toNanos();
        if (now - w.start >= windowNanos) {
            w.start = now;
            w.count = 0;
        }
        Duration reset = Duration.ofNanos(w.start + windowNanos - now);
        if (w.count + weight > limit.requests()) {
            return Optional.of(new Decision(bucket, limit, limit.requests() - w.count, reset, false));
        }
        w.count += weight;
        return Optional.of(new Decision(bucket, limit, limit.requests() - w.count, reset, true));
    }
}
