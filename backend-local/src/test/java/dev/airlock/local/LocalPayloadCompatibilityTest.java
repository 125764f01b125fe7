package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;

/**
 * The local backend without a sandbox ({@code isolation=none}) against the kit, with stdin staged
 * as a 0600 file (PAYLOAD) like the cloud backends; {@link LocalIsolatedPayloadCompatibilityTest}
 * is the same under bubblewrap.
 */
class LocalPayloadCompatibilityTest extends EnvironmentCompatibilityKit {

    @Override
    protected Settings settings() {
        return Settings.of("airlock.container", "no", "airlock.local.isolation", "none", "airlock.local.stdin-mode", "payload");
    }

    @Override
    protected Environment openEnvironment(OpenContext context) {
        return new LocalProvider().open(context);
    }
}
