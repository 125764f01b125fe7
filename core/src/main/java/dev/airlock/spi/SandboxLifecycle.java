package dev.airlock.spi;

import dev.airlock.settings.Settings;

import java.time.Duration;

/**
 * Optional for an {@link EnvironmentProvider} whose sandboxes can outlive one command: the CLI's
 * {@code up}, {@code down ID} and {@code gc}. The CLI finds it with {@code provider instanceof
 * SandboxLifecycle}, so it needs no compile-time knowledge of any backend.
 */
public interface SandboxLifecycle extends LeftoverCollector {

    /** How long an {@code up} sandbox lives when the caller does not say ({@code airlock up --ttl}). */
    Duration DEFAULT_TTL = Duration.ofHours(1);

    /**
     * Creates a sandbox that outlives the caller and returns its id, the value {@link #attachKey()}
     * takes. It lives {@code ttl}, in the service's own terms (a lifetime, or an idle time before
     * it stops), unless {@link #down} removes it first; a ttl the service cannot give is a
     * {@link dev.airlock.ConfigurationException} that names the service's limit.
     */
    String up(Settings settings, Duration ttl);

    /** Whether {@link #up}'s sandboxes end by themselves after their ttl; false where they live until {@link #down}. */
    default boolean expires() {
        return true;
    }

    /** Stops and removes a sandbox made by {@link #up}; refuses one this backend did not make. */
    void down(Settings settings, String id);

    /** The setting that attaches an environment to a sandbox made by {@link #up}, e.g. {@code airlock.docker.container}. */
    String attachKey();
}
