package dev.airlock.docker;

import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Optional;

/**
 * The compatibility kit against a real podman service ({@code podman system service}) through its
 * Docker-compatible API, with the docker backend unchanged: what a user gets with
 * {@code DOCKER_HOST=unix:///run/podman/podman.sock}.
 */
@ExtendWith(PodmanFixture.class)
class PodmanCompatibilityTest extends EnvironmentCompatibilityKit {

    @Override
    protected Settings settings() {
        return PodmanFixture.podmanSettings();
    }

    @Override
    protected Environment openEnvironment(OpenContext context) {
        return new DockerProvider().open(context);
    }

    @Override
    protected Optional<Environment> attach(Environment to) {
        String id = ((DockerEnvironment) to).containerId();
        return Optional.of(openEnvironment(OpenContext.of(settings().with(DockerSettings.CONTAINER, id))));
    }
}
