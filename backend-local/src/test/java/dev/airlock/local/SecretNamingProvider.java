package dev.airlock.local;

import dev.airlock.BackendUnavailableException;
import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.OpenContext;

import java.util.Set;

/**
 * A second backend on the test class path that only names its credential variable, whose name
 * looks like nothing secret: the local backend must strip it anyway ({@link SecrecyTest}).
 */
public final class SecretNamingProvider implements EnvironmentProvider {
    static final String VARIABLE = "ACME_SESSION_BLOB";

    @Override
    public String name() {
        return "test-secret-naming";
    }

    @Override
    public Availability check(Settings settings) {
        return Availability.unavailable("a test provider that only names its secret variable");
    }

    @Override
    public Environment open(OpenContext context) {
        throw new BackendUnavailableException("test-secret-naming opens nothing");
    }

    @Override
    public Set<String> secretVariables() {
        return Set.of(VARIABLE);
    }
}
