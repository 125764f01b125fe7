package dev.airlock.remote;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

/**
 * The wait a service asks for, in every form seen: {@code Retry-After: 30} (seconds),
 * {@code Retry-After: Wed, 21 Oct 2026 07:28:00 GMT} (an HTTP date), and Daytona's per-bucket
 * {@code Retry-After-<bucket>} ({@code retry-after-sandbox-create: 12}). The cap and the jitter
 * are applied by {@link RetryPolicy}, not here.
 */
public final class RetryAfter {
    public static final String HEADER = "Retry-After";

    private RetryAfter() {
    }

    /** One header value: seconds (fractions allowed) or an HTTP date; a date in the past is zero. */
    public static Optional<Duration> parse(String value, Instant now) {
        if (value == null || value.isBlank()) {
            return Optional.empty();
        }
        String v = value.trim();
        try {
            double seconds = Double.parseDouble(v);
            if (seconds < 0 || Double.isNaN(seconds) || Double.isInfinite(seconds)) {
                return Optional.empty();
            }
            return Optional.of(Duration.ofMillis((long) Math.ceil(Math.min(seconds, 1e9) * 1000)));
        } catch (NumberFormatException notSeconds) {
            try {
                Instant at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
                Duration d = Duration.between(now, at);
                return Optional.of(d.isNegative() ? Duration.ZERO : d);
            } catch (DateTimeParseException notDate) {
                return Optional.empty();
            }
        }
    }

    /**
     * The wait from a response's headers: {@code Retry-After-<bucket>} for the call's bucket when
     * given, else plain {@code Retry-After}, else the longest of any {@code Retry-After-*}.
     *
     * @param header  a header by name, case-insensitive (OkHttp's {@code Headers::get})
     * @param names   every header name of the response
     * @param bucket  the rate-limit bucket of the call ({@code sandbox-create}), or empty
     */
    public static Optional<Duration> fromHeaders(Function<String, String> header, Iterable<String> names,
                                                 String bucket, Instant now) {
        if (bucket != null && !bucket.isEmpty()) {
            Optional<Duration> b = parse(header.apply(HEADER + "-" + bucket), now);
            if (b.isPresent()) {
                return b;
            }
        }
        Optional<Duration> plain = parse(header.apply(HEADER), now);
        if (plain.isPresent()) {
            return plain;
        }
        Optional<Duration> longest = Optional.empty();
        String prefix = HEADER.toLowerCase(Locale.ROOT) + "-";
        for (String name : names) {
            if (name.toLowerCase(Locale.ROOT).startsWith(prefix)) {
                Optional<Duration> d = parse(header.apply(name), now);
                if (d.isPresent() && (longest.isEmpty() || d.get().compareTo(longest.get()) > 0)) {
                    longest = d;
                }
            }
        }
        return longest;
    }
}
