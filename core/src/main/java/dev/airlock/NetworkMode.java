package dev.airlock;

import dev.airlock.settings.Settings;

import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * What a sandbox's commands may reach on the network ({@code airlock.network}). A backend declares
 * the modes it can enforce in {@link Capabilities#networkModes()}; opening with any other mode is
 * refused before a command runs.
 */
public enum NetworkMode {
    /** The network the backend gives by default (the host's, the daemon's bridge, the service's). */
    ON,
    /** No network at all: nothing outside the sandbox answers, not even the host's loopback. */
    OFF,
    /** Only the destinations of {@link NetworkAllowlist} ({@code airlock.network.allow.NAME}). */
    ALLOWLIST;

    /** The one setting for every backend. */
    public static final String KEY = "airlock.network";

    /** The mode as the setting spells it. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** {@code airlock.network}, {@code on} when unset; another word is a one-line error naming the valid ones. */
    public static NetworkMode from(Settings settings) {
        return valueOf(settings.getChoice(KEY, "on", "on", "off", "allowlist").toUpperCase(Locale.ROOT));
    }

    /** Whether {@code airlock.network} is set at all (a backend with its own older key gives way to it). */
    public static boolean isSet(Settings settings) {
        return settings.get(KEY).map(String::trim).filter(v -> !v.isEmpty()).isPresent();
    }

    /**
     * The mode asked for, when {@code enforced} holds it; else one line naming the backend and what
     * to do. Called before a backend creates anything, and again by the core with the backend's
     * {@link Capabilities}.
     */
    public static NetworkMode require(Settings settings, String backend, Set<NetworkMode> enforced) {
        NetworkMode mode = from(settings);
        NetworkAllowlist allow = NetworkAllowlist.from(settings);
        if (mode != ALLOWLIST && !allow.isEmpty()) {
            throw new ConfigurationException(allow.entries().get(0).key() + " is set, but " + KEY + "=" + mode.label()
                    + " does not read it; set " + KEY + "=allowlist, or remove the " + NetworkAllowlist.PREFIX + ".* keys");
        }
        if (enforced.contains(mode)) {
            if (mode == ALLOWLIST && allow.isEmpty()) {
                throw new ConfigurationException(KEY + "=allowlist names no destination; add " + NetworkAllowlist.PREFIX
                        + ".NAME=HOST-OR-CIDR[:PORT] (like 10.0.0.0/8), or set " + KEY + "=off");
            }
            return mode;
        }
        String can = enforced.stream().map(NetworkMode::label).collect(Collectors.toCollection(TreeSet::new)).stream()
                .collect(Collectors.joining(", "));
        String others = (mode == ALLOWLIST ? "that enforces allowlists" : "that can cut the network")
                + " (local under bubblewrap, docker, modal, daytona, vercel)";
        throw new ConfigurationException("the " + backend + " backend cannot enforce " + KEY + "=" + mode.label()
                + " (it enforces: " + (can.isEmpty() ? "none" : can) + "); set " + KEY + " to one of those, or choose a"
                + " backend " + others);
    }
}
