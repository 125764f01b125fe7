package dev.airlock.docker;

import dev.airlock.settings.Settings;
import org.junit.jupiter.api.extension.ExtendWith;

/** The compatibility kit against a real Docker daemon, on the offline busybox image. */
@ExtendWith(DockerFixture.class)
class DockerCompatibilityTest extends DockerApiKit {

    @Override
    protected Settings settings() {
        return DockerFixture.settings();
    }
}
