package dev.airlock.spi;

import dev.airlock.settings.Settings;


/**
 * Optional for an {@link EnvironmentProvider} whose sandboxes can outlive one command: the CLI's
 * {@code up}, {@code down ID} and {@code gc}. The CLI finds it with {@code provider instanceof
 * SandboxLifecycle}, so it needs no compile-time knowledge of any backend.
 */
public interface SandboxLifecycle extends LeftoverCollector {

    /** Creates a sandbox that outlives the caller and returns its id, the value {@link #attachKey()} takes. */
    String up(Settings settings);

    /** Stops and removes a sandbox made by {@link #up}; refuses one this backend did not make. */
    void down(Settings settings, String id);

    /** The setting that attaches an environment to a sandbox made by {@link #up}, e.g. {@code airlock.docker.container}. */
    String attachKey();
}
