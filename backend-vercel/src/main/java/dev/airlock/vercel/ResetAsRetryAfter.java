package dev.airlock.vercel;

import okhttp3.Interceptor;
import okhttp3.Response;

import java.io.IOException;
import java.util.function.LongSupplier;

/**
 * A 429 that says when its limit resets only by {@code X-RateLimit-Reset} (Vercel's API header:
 * the reset time in epoch seconds) gets the equivalent {@code Retry-After} (seconds from now), so
 * the one retry rule ({@code RetryPolicy}) and {@link RateLimitedCreate} honour either. A
 * {@code Retry-After} the service sent is left as it is; any other response is untouched.
 */
final class ResetAsRetryAfter implements Interceptor {
    static final String RESET = "X-RateLimit-Reset";
    private final LongSupplier nowMillis;

    ResetAsRetryAfter(LongSupplier nowMillis) {
        this.nowMillis = nowMillis;
    }

    @Override
    public Response intercept(Chain chain) throws IOException {
        Response response = chain.proceed(chain.request());
        if (response.code() != 429 || response.header("Retry-After") != null) {
            return response;
        }
        String reset = response.header(RESET);
        long wait = secondsUntil(reset, nowMillis.getAsLong());
        return wait < 0 ? response : response.newBuilder().header("Retry-After", String.valueOf(wait)).build();
    }

    /**
     * Seconds from {@code now} until {@code reset} (epoch seconds, or epoch milliseconds when it is
     * that large), rounded up and never negative; -1 when it is not a number.
     */
    static long secondsUntil(String reset, long nowMillis) {
        if (reset == null) {
            return -1;
        }
        long at;
        try {
            at = Long.parseLong(reset.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
        long atMillis = at > 100_000_000_000L ? at : at * 1000;
        return Math.max(0, (atMillis - nowMillis + 999) / 1000);
    }
}
