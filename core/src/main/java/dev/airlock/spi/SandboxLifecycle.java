package dev.airlock.spi;

import dev.airlock.settings.Settings;

import java.time.Duration;
import java.util.List;

/**
 * Optional for an {@link EnvironmentProvider} whose sandboxes can outlive one command: the CLI's
 * {@code up}, {@code down ID} and {@code gc}. The CLI finds it with {@code provider instanceof
 * SandboxLifecycle}, so it needs no compile-time knowledge of any backend.
 */
public interface SandboxLifecycle {

    /** Creates a sandbox that outlives the caller and returns its id, the value {@link #attachKey()} takes. */
    String up(Settings settings);

    /** Stops and removes a sandbox made by {@link #up}; refuses one this backend did not make. */
    void down(Settings settings, String id);

    /**
     * Removes the sandboxes this backend labelled that were created more than {@code olderThan}
     * ago (left by processes that died before closing); those made by {@link #up} only when
     * {@code includeKept}. Returns the ids removed.
     */
    List<String> gc(Settings settings, Duration olderThan, boolean includeKept);

    /** The setting that attaches an environment to a sandbox made by {@link #up}, e.g. {@code airlock.docker.container}. */
    String attachKey();
}
