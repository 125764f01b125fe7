package dev.airlock;

import org.junit.jupiter.api.Test;

import java.net.URL;
import java.net.URLClassLoader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A backend that cannot be found is named with what to do: the artifact to add, or the closest name. */
class EnvironmentsTest {
    private static final ClassLoader NO_BACKENDS = new URLClassLoader(new URL[0], null);

    @Test
    void oneOfOurBackendsMissingNamesItsArtifact() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.provider("docker", NO_BACKENDS));
        assertEquals("the docker backend (airlock.backend) is not on the class path: add dev.airlock:airlock-backend-docker"
                + " to your dependencies; found: none", e.getMessage());
    }

    @Test
    void aMisspelledBackendGetsTheClosestName() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.provider("dokcer", NO_BACKENDS));
        assertEquals("no backend named 'dokcer' (airlock.backend); did you mean docker? found: none,"
                + " add a backend jar such as airlock-backend-local to the classpath", e.getMessage());
    }
}
