package dev.airlock.settings;

import java.util.Arrays;
import java.util.Objects;

/**
 * A secret value (a token, a key passphrase). {@link #toString()} redacts it, so it cannot reach a
 * log line or an exception message by accident; {@link #reveal()} is the one deliberate way out.
 */
public final class Secret {
    private final char[] value;

    private Secret(char[] value) {
        this.value = value;
    }

    public static Secret of(String value) {
        return new Secret(Objects.requireNonNull(value, "value").toCharArray());
    }

    /** The secret in clear, for the one call that sends it (an auth header, a key decryption). */
    public String reveal() {
        return new String(value);
    }

    public char[] revealChars() {
        return value.clone();
    }

    public boolean isEmpty() {
        return value.length == 0;
    }

    @Override
    public String toString() {
        return "Secret[redacted]";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Secret s && Arrays.equals(value, s.value);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(value);
    }
}
