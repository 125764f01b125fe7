package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.BeforeAll;

/** The kit under bubblewrap with stdin staged as a 0600 file (PAYLOAD): staging works through the sandbox's binds. */
class LocalIsolatedPayloadCompatibilityTest extends EnvironmentCompatibilityKit {

    @BeforeAll
    static void needsBubblewrap() {
        Services.require(dev.airlock.spi.HostPrograms.onPath("bwrap").isPresent(), "bubblewrap is not installed (apt-get install bubblewrap)");
    }

    @Override
    protected Settings settings() {
        // workdir none: this module's directory holds the tests' stand-in real home, which bwrap keeps read-only
        return Settings.of("airlock.container", "no", "airlock.local.isolation", "bwrap", "airlock.local.workdir", "none",
                "airlock.local.stdin-mode", "payload");
    }

    @Override
    protected Environment openEnvironment(OpenContext context) {
        return new LocalProvider().open(context);
    }
}
