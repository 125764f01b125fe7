package dev.airlock.remote;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;

import java.time.Duration;
import java.util.Objects;
import java.util.Random;

/**
 * The retry rule and its numbers, in one place for every cloud client.
 *
 * <p>The rule ({@link #retryable}): only an idempotent {@link CallKind} is ever sent again, and
 * only after a failure that can pass: the request never left, its answer was lost, or the
 * service said "later" (408, 429, 502, 503, 504; gRPC UNAVAILABLE, DEADLINE_EXCEEDED,
 * RESOURCE_EXHAUSTED). A plain 500 is not retried: it is usually a bug that repeats. A
 * {@link CallKind#DISPATCH} is never retried, whatever happened.
 *
 * <p>The wait ({@link #waitBefore}): the service's Retry-After when it gave one (never shorter,
 * up to {@code jitter} longer), else exponential backoff from {@code initialBackoff} doubling to
 * {@code maxBackoff}, spread by ±{@code jitter}. A Retry-After above {@code retryAfterMax} ends
 * the call at once with the wait in the message, rather than blocking a caller for minutes.
 *
 * <p>Circuit breaker: after {@code breakerFailures} calls in a row that found the service
 * failing (not sent, lost, 5xx), calls fail at once with one clear message for
 * {@code breakerOpenFor}.
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, Duration retryAfterMax,
                          double jitter, int breakerFailures, Duration breakerOpenFor, long seed, Sleeper sleeper) {

    public static final int DEFAULT_MAX_ATTEMPTS = 4;
    public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(500);
    public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(8);
    public static final Duration DEFAULT_RETRY_AFTER_MAX = Duration.ofSeconds(60);
    public static final double DEFAULT_JITTER = 0.2;
    public static final int DEFAULT_BREAKER_FAILURES = 5;
    public static final Duration DEFAULT_BREAKER_OPEN_FOR = Duration.ofSeconds(30);

    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1");
        }
        if (jitter < 0 || jitter >= 1) {
            throw new IllegalArgumentException("jitter must be in [0, 1)");
        }
        if (breakerFailures < 1) {
            throw new IllegalArgumentException("breakerFailures must be at least 1");
        }
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        Objects.requireNonNull(retryAfterMax, "retryAfterMax");
        Objects.requireNonNull(breakerOpenFor, "breakerOpenFor");
        Objects.requireNonNull(sleeper, "sleeper");
    }

    public static RetryPolicy defaults() {
        return new RetryPolicy(DEFAULT_MAX_ATTEMPTS, DEFAULT_INITIAL_BACKOFF, DEFAULT_MAX_BACKOFF, DEFAULT_RETRY_AFTER_MAX,
                DEFAULT_JITTER, DEFAULT_BREAKER_FAILURES, DEFAULT_BREAKER_OPEN_FOR, System.nanoTime(), Sleeper.REAL);
    }

    /**
     * The policy from {@code PREFIX.retry.max-attempts}, {@code .retry.initial-backoff},
     * {@code .retry.max-backoff}, {@code .retry.retry-after-max}, {@code .breaker.failures},
     * {@code .breaker.open-for} (e.g. prefix {@code airlock.daytona}).
     */
    public static RetryPolicy from(Settings s, String prefix) {
        int attempts = s.getInt(prefix + ".retry.max-attempts", DEFAULT_MAX_ATTEMPTS);
        if (attempts < 1 || attempts > 20) {
            throw new ConfigurationException(prefix + ".retry.max-attempts must be between 1 and 20, not " + attempts);
        }
        int failures = s.getInt(prefix + ".breaker.failures", DEFAULT_BREAKER_FAILURES);
        if (failures < 1) {
            throw new ConfigurationException(prefix + ".breaker.failures must be at least 1, not " + failures);
        }
        return new RetryPolicy(attempts,
                s.getDuration(prefix + ".retry.initial-backoff", DEFAULT_INITIAL_BACKOFF),
                s.getDuration(prefix + ".retry.max-backoff", DEFAULT_MAX_BACKOFF),
                s.getDuration(prefix + ".retry.retry-after-max", DEFAULT_RETRY_AFTER_MAX),
                DEFAULT_JITTER, failures,
                s.getDuration(prefix + ".breaker.open-for", DEFAULT_BREAKER_OPEN_FOR),
                System.nanoTime(), Sleeper.REAL);
    }

    public RetryPolicy withSleeper(Sleeper s) {
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, retryAfterMax, jitter, breakerFailures,
                breakerOpenFor, seed, s);
    }

    public RetryPolicy withSeed(long s) {
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, retryAfterMax, jitter, breakerFailures,
                breakerOpenFor, s, sleeper);
    }

    public RetryPolicy withBreaker(int failures, Duration openFor) {
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, retryAfterMax, jitter, failures, openFor, seed,
                sleeper);
    }

    /** THE rule: may {@code kind} be sent again after {@code f}? */
    public boolean retryable(CallKind kind, WireFailure f) {
        if (!kind.idempotent()) {
            return false;
        }
        if (f.retryAfter().isPresent() && f.retryAfter().get().compareTo(retryAfterMax) > 0) {
            return false; // the service wants longer than we may block: say so now
        }
        return switch (f.stage()) {
            case NOT_SENT, LOST -> true;
            case ANSWERED -> switch (f.httpStatus()) {
                case 408, 429, 502, 503, 504 -> true;
                default -> false;
            };
        };
    }

    /**
     * Whether a dispatch that failed this way may have run. Only a clear refusal by the service
     * (a 4xx, or 501) or a request that never left says it did not; anything else is unknown.
     */
    public static boolean dispatchMayHaveRun(WireFailure f) {
        return switch (f.stage()) {
            case NOT_SENT -> false;
            case LOST -> true;
            case ANSWERED -> f.httpStatus() >= 500 && f.httpStatus() != 501;
        };
    }

    /** The wait before attempt {@code failedAttempts + 1}; {@code random} gives the jitter. */
    Duration waitBefore(int failedAttempts, WireFailure f, Random random) {
        double r = random.nextDouble();
        if (f.retryAfter().isPresent()) {
            Duration ra = f.retryAfter().get();
            long ms = ra.toMillis() + (long) (ra.toMillis() * jitter * r); // never earlier than asked
            return Duration.ofMillis(Math.min(ms, Math.max(ra.toMillis(), retryAfterMax.toMillis())));
        }
        long base = initialBackoff.toMillis();
        for (int i = 1; i < failedAttempts && base < maxBackoff.toMillis(); i++) {
            base *= 2;
        }
        base = Math.min(base, maxBackoff.toMillis());
        return Duration.ofMillis(Math.round(base * (1 - jitter + 2 * jitter * r)));
    }

    @Override
    public String toString() {
        return "RetryPolicy[attempts=" + maxAttempts + ", backoff=" + initialBackoff + ".." + maxBackoff
                + ", retryAfterMax=" + retryAfterMax + ", jitter=" + jitter + ", breaker=" + breakerFailures + "/"
                + breakerOpenFor + "]";
    }
}
