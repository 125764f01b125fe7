package dev.airlock.containment;

import dev.airlock.ConfigurationException;

import java.util.Locale;

/** Which HOME children get: {@code airlock.home-mode} / {@code AIRLOCK_HOME_MODE}. */
public enum HomeMode {
    /** The real HOME on hosts, the profile home in containers. */
    AUTO,
    /** Always the real HOME. */
    REAL,
    /** Always the profile home, {@code $AIRLOCK_HOME/home}. */
    PROFILE;

    public static final String KEY = "airlock.home-mode";

    /** Parses a value with its aliases; an unknown one is an error naming the valid values. */
    public static HomeMode parse(String raw) {
        String v = raw.trim().toLowerCase(Locale.ROOT);
        return switch (v) {
            case "auto", "" -> AUTO;
            case "real", "host", "user", "real_home", "real-home" -> REAL;
            case "profile", "isolated", "profile_home", "profile-home" -> PROFILE;
            default -> throw new ConfigurationException("unknown " + KEY + " '" + raw + "': valid values are auto, real"
                    + " (aliases host, user, real_home, real-home) and profile (aliases isolated, profile_home, profile-home)");
        };
    }
}
