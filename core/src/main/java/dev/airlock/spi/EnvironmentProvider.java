package dev.airlock.spi;

import dev.airlock.Environment;
import dev.airlock.settings.SettingKey;
import dev.airlock.settings.Settings;

import java.util.List;
import java.util.Set;

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

    /**
     * The environment variables that hold this backend's credentials (e.g. {@code MODAL_TOKEN_ID},
     * {@code DOCKER_AUTH_CONFIG}). The core strips the union of every discovered provider's names
     * from every child, whichever backend is in use, on top of the names that look secret by
     * themselves ({@code *_TOKEN}, {@code *_SECRET}...). Name the ones those patterns miss.
     */
    default Set<String> secretVariables() {
        return Set.of();
    }

    /**
     * The {@code airlock.NAME.*} keys this backend reads, each with its type, default, whether it
     * is secret and what it means. An {@code airlock.*} key that neither the core nor any provider
     * declares is reported as unknown (with the closest known key), and is an error under
     * {@code airlock.settings.strict=true}. docs/settings.md is generated from them, and the tables
     * of docs/backends.md are checked against them.
     */
    default List<SettingKey> settingKeys() {
        return List.of();
    }
}
