package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;

/** The local backend against the compatibility kit, stdin streamed through pipes (PIPE). */
class LocalCompatibilityTest extends EnvironmentCompatibilityKit {

    @Override
    protected Settings settings() {
        return Settings.of("airlock.container", "no"); // this VM has /.dockerenv; keep the real HOME
    }

    @Override
    protected Environment openEnvironment(OpenContext context) {
        return new LocalProvider().open(context);
    }
}
