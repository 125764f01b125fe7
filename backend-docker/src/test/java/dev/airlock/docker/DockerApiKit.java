package dev.airlock.docker;

import dev.airlock.Environment;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;

import java.util.Optional;

/**
 * The compatibility kit on the docker backend, for any daemon speaking the Docker API (dockerd,
 * podman): a subclass names its fixture and the daemon in its {@link #settings()}.
 */
abstract class DockerApiKit extends EnvironmentCompatibilityKit {

    @Override
    protected Environment openEnvironment(OpenContext context) {
        return new DockerProvider().open(context);
    }

    @Override
    protected Optional<Environment> attach(Environment to) {
        String id = DockerBackend.of(to).containerId();
        return Optional.of(openEnvironment(OpenContext.of(settings().with(DockerSettings.CONTAINER, id))));
    }

    /** The case's snapshot image, by its id (the daemon refuses while a container still uses it). */
    @Override
    protected void discardSnapshot(String id) {
        try (DockerDaemon daemon = new DockerDaemon(DockerSettings.from(settings(), System.getenv()))) {
            if (!daemon.removeImage(id)) {
                throw new AssertionError("snapshot image " + id + " is still in use after its environment closed");
            }
        }
    }
}
