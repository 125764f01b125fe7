package dev.airlock.emulator;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The credentials an emulator accepts, named by the service's own variables
 * ({@code MODAL_TOKEN_ID}/{@code MODAL_TOKEN_SECRET}, {@code DAYTONA_API_KEY},
 * {@code VERCEL_TOKEN}/{@code VERCEL_TEAM_ID}): the value of the variable in the emulator's
 * environment when it is set, else a random one made at start. {@code airlock emulator NAME}
 * prints the ones it made (see {@link #describe()}); values that came from the environment are
 * never printed. {@link #toString()} names the variables only.
 */
public final class EmulatorCredentials {
    /** An emulator that takes no credentials. */
    public static final EmulatorCredentials NONE = new EmulatorCredentials(Map.of(), Set.of());

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final char[] ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".toCharArray();

    private final Map<String, String> values;
    private final Set<String> fromEnvironment;

    private EmulatorCredentials(Map<String, String> values, Set<String> fromEnvironment) {
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
        this.fromEnvironment = Set.copyOf(fromEnvironment);
    }

    /** Starts a set read from {@code environment} (the emulator's, e.g. {@link EmulatorContext#environment()}). */
    public static Builder from(Map<String, String> environment) {
        return new Builder(environment);
    }

    /** The value of a variable this set names. */
    public String value(String variable) {
        String v = values.get(variable);
        if (v == null) {
            throw new IllegalArgumentException("no credential named " + variable);
        }
        return v;
    }

    /** Every variable and its value, in order: what a client's environment holds to be let in. */
    public Map<String, String> asEnvironment() {
        return values;
    }

    /** Whether the value came from the emulator's environment (not made here, so never printed). */
    public boolean fromEnvironment(String variable) {
        return fromEnvironment.contains(variable);
    }

    /** Whether {@code presented} is the value of {@code variable}, compared in constant time. */
    public boolean accepts(String variable, String presented) {
        return presented != null && matches(value(variable), presented);
    }

    /** Constant-time equality of two secrets (a mismatch in the first byte takes as long as in the last). */
    public static boolean matches(String expected, String presented) {
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), presented.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * One line per variable for the connection settings {@code airlock emulator NAME} prints:
     * {@code NAME=VALUE} for a value made here, {@code NAME from the environment} otherwise.
     */
    public List<String> describe() {
        List<String> out = new ArrayList<>();
        values.forEach((k, v) -> out.add(fromEnvironment.contains(k) ? k + " from the environment" : k + "=" + v));
        return out;
    }

    @Override
    public String toString() {
        return "credentials " + values.keySet() + " (values redacted)";
    }

    /** A random value: {@code prefix} and 24 letters and digits (about 143 bits). */
    static String random(String prefix) {
        StringBuilder b = new StringBuilder(prefix);
        for (int i = 0; i < 24; i++) {
            b.append(ALPHABET[RANDOM.nextInt(ALPHABET.length)]);
        }
        return b.toString();
    }

    public static final class Builder {
        private final Map<String, String> environment;
        private final Map<String, String> values = new LinkedHashMap<>();
        private final Set<String> fromEnvironment = new LinkedHashSet<>();

        private Builder(Map<String, String> environment) {
            this.environment = Map.copyOf(Objects.requireNonNull(environment, "environment"));
        }

        /** The variable's value from the environment when set and not blank, else a random one starting with {@code prefix}. */
        public Builder variable(String name, String prefix) {
            String v = environment.get(name);
            if (v != null && !v.isBlank()) {
                values.put(name, v.trim());
                fromEnvironment.add(name);
            } else {
                values.put(name, random(prefix));
            }
            return this;
        }

        public EmulatorCredentials build() {
            return new EmulatorCredentials(values, fromEnvironment);
        }
    }
}
