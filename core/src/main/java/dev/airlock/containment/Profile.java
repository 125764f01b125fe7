package dev.airlock.containment;

import dev.airlock.ConfigurationException;

import java.util.Locale;

/** A named containment preset: {@code airlock.profile}. */
public enum Profile {
    /** Home mode, container detection and scratch TMPDIR only. */
    NONE,
    /**
     * For evaluation runs: everything under {@code airlock.run-dir} (home, temp dir, Airlock's state),
     * shims first on PATH for crontab, systemctl and at, the user bus variables removed.
     */
    EVAL;

    public static final String KEY = "airlock.profile";

    /** Parses a value; an unknown one is an error naming the valid values. */
    public static Profile parse(String raw) {
        return switch (raw.trim().toLowerCase(Locale.ROOT)) {
            case "", "none", "default" -> NONE;
            case "eval" -> EVAL;
            default -> throw new ConfigurationException("unknown " + KEY + " '" + raw + "': valid values are none and eval");
        };
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
