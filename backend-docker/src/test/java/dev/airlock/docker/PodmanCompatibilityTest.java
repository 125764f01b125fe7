package dev.airlock.docker;

import dev.airlock.settings.Settings;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The compatibility kit against a real podman service ({@code podman system service}) through its
 * Docker-compatible API, with the docker backend unchanged: what a user gets with
 * {@code DOCKER_HOST=unix:///run/podman/podman.sock}. The groups and cases run are
 * {@link PodmanFixture}'s choice (docs/backends.md, "Podman").
 */
@ExtendWith(PodmanFixture.class)
class PodmanCompatibilityTest extends DockerApiKit {

    @Override
    protected Settings settings() {
        return PodmanFixture.podmanSettings();
    }
}
