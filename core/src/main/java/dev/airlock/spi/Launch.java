package dev.airlock.spi;

import java.util.Map;
import java.util.Set;

/**
 * What the core asks a backend to start: {@code shell -c script}, nothing else. Payloads never
 * appear in {@code script}; it holds only the core's prefix lines and the command.
 *
 * @param shell     {@code bash} or {@code sh} (a name on the target's PATH)
 * @param script    the script text
 * @param env       variables to set (only for backends with native env; otherwise the core staged them)
 * @param unset     variables to remove from the inherited environment (native env only)
 * @param pipeStdin whether the core will stream stdin (otherwise stdin is closed at once)
 * @param internal  one of Airlock's own scripts (probe, files, staging, kill), not the user's command
 */
public record Launch(String shell, String script, Map<String, String> env, Set<String> unset, boolean pipeStdin,
                     boolean internal) {

    public Launch {
        env = Map.copyOf(env);
        unset = Set.copyOf(unset);
    }

    /** The argv a shell backend runs: {@code [shell, "-c", script]}. */
    public java.util.List<String> argv() {
        return java.util.List.of(shell, "-c", script);
    }
}
