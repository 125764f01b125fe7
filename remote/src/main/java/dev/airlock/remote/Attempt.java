package dev.airlock.remote;

import java.util.Objects;
import java.util.UUID;

/**
 * One attempt of a call: its number (1 for the first send) and the idempotency key shared by
 * every attempt of the same call, so a {@link CallKind#KEYED} call can send
 * {@code x-idempotency-key} and {@code x-retry-attempt} the way Modal's SDKs do.
 */
public record Attempt(int number, String idempotencyKey) {
    public static final String IDEMPOTENCY_KEY_HEADER = "x-idempotency-key";
    public static final String RETRY_ATTEMPT_HEADER = "x-retry-attempt";

    public Attempt {
        if (number < 1) {
            throw new IllegalArgumentException("attempts count from 1");
        }
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
    }

    static String newKey() {
        return UUID.randomUUID().toString();
    }

    /** The attempt's number as a retry count ({@code 0} for the first send), as {@code x-retry-attempt} carries it. */
    public int retries() {
        return number - 1;
    }
}
