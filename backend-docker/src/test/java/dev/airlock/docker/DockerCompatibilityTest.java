package dev.airlock.docker;

import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Optional;

/** The compatibility kit against a real Docker daemon, on the offline busybox image. */
@ExtendWith(DockerFixture.class)
class DockerCompatibilityTest extends EnvironmentCompatibilityKit {

    @Override
    protected Settings settings() {
        return DockerFixture.settings();
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
