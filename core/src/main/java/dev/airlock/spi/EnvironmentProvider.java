package dev.airlock.spi;

import dev.airlock.Environment;
import dev.airlock.settings.Settings;

/**
 * A backend, found with {@link java.util.ServiceLoader}: register the implementation in
 * {@code META-INF/services/dev.airlock.spi.EnvironmentProvider}. Two providers with one name are
 * an error.
 */
public interface EnvironmentProvider {

    /** The name users choose with {@code airlock.backend}, e.g. {@code docker}. Lower case. */
    String name();

    /** Whether this backend can work with these settings here; cheap, no sandbox is created. */
    Availability check(Settings settings);

    /** Opens an environment. Failures are {@code AirlockException}s with a one-line reason. */
    Environment open(OpenContext context);
}
