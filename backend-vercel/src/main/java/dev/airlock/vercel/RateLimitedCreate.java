package dev.airlock.vercel;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.remote.WireFailure;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * A sandbox create that Vercel refused with 429 (its vCPU allocation rate, or another rate limit):
 * the refusal is an answer, given before anything is allocated, so nothing was made and the
 * create may be sent again (the official SDK resends it too). It is sent again after the wait the
 * service asked for ({@code Retry-After}, or {@code X-RateLimit-Reset}, see {@link ResetAsRetryAfter}),
 * at most {@code airlock.vercel.retry.max-attempts} times in all, and only when that wait is within
 * {@code airlock.vercel.retry.retry-after-max}; otherwise the call ends with one line that says
 * which limit, when it resets and what to do. Any other failure of a create (lost answer, 5xx) is
 * never resent: whether it made a sandbox is unknown.
 */
final class RateLimitedCreate {
    private static final Logger LOG = LoggerFactory.getLogger(RateLimitedCreate.class);

    private RateLimitedCreate() {
    }

    /** Runs {@code create}, sending it again after each 429 as far as {@code policy} allows. */
    static <T> T send(RetryPolicy policy, Supplier<T> create) {
        for (int attempt = 1; ; attempt++) {
            try {
                return create.get();
            } catch (AirlockException e) {
                WireFailure refused = rateLimited(e);
                if (refused == null) {
                    throw e;
                }
                Optional<Duration> wait = refused.retryAfter();
                if (wait.isEmpty() || wait.get().compareTo(policy.retryAfterMax()) > 0 || attempt >= policy.maxAttempts()) {
                    throw giveUp(refused, attempt, policy.retryAfterMax(), e);
                }
                Duration spread = spread(wait.get(), policy);
                LOG.info("Vercel rate limited the create of a sandbox ({}); sending it again in {}", refused.detail(), seconds(spread));
                try {
                    policy.sleeper().sleep(spread);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt(); // interrupt means cancel: stop, keep the flag
                    throw new BackendException("interrupted while waiting out Vercel's rate limit to create a sandbox", interrupted);
                }
            }
        }
    }

    /**
     * The wait, never shorter than asked and up to the policy's jitter longer (as {@code RetryPolicy}
     * spreads a Retry-After), so clients refused together do not all come back at the same instant.
     */
    static Duration spread(Duration wait, RetryPolicy policy) {
        long ms = wait.toMillis();
        return Duration.ofMillis(ms + (long) (ms * policy.jitter() * ThreadLocalRandom.current().nextDouble()));
    }

    /** The service's 429 behind a mapped failure, or null. */
    private static WireFailure rateLimited(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof WireFailure w) {
                return w.stage() == WireFailure.Stage.ANSWERED && w.httpStatus() == 429 ? w : null;
            }
        }
        return null;
    }

    /**
     * The one line: the limit as the service named it, how many refusals, when it resets, what to
     * do. The detail is the service's code and message, already redacted.
     */
    static BackendUnavailableException giveUp(WireFailure refused, int attempts, Duration maxWait, Throwable cause) {
        String detail = refused.detail().isEmpty() ? "429" : refused.detail();
        Optional<Duration> wait = refused.retryAfter();
        String when;
        if (wait.isEmpty()) {
            when = "it did not say when the limit resets; try again later";
        } else if (wait.get().compareTo(maxWait) > 0) {
            when = "it resets in " + seconds(wait.get()) + ", longer than the " + seconds(maxWait) + " this client waits ("
                    + VercelSettings.PREFIX + ".retry.retry-after-max); try again then";
        } else {
            when = "it resets in " + seconds(wait.get()) + "; try again then";
        }
        return new BackendUnavailableException("Vercel refused to create a sandbox: rate limited (" + detail + ")"
                + (attempts > 1 ? ", " + attempts + " times in a row" : "") + "; " + when
                + ", or create fewer sandboxes at once or with fewer vCPUs (" + VercelSettings.VCPUS + ")", cause);
    }

    /** Whole seconds, rounded up: a wait is never said shorter than it is. */
    static String seconds(Duration d) {
        return Math.max(0, (d.toMillis() + 999) / 1000) + " s";
    }
}
