package com.example.airlock.hostsample;

import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;

/** The sample plugin against the whole compatibility kit. */
class HostSampleCompatibilityTest extends EnvironmentCompatibilityKit {

    @Override
    protected Settings settings() {
        // Not a container (this machine may look like one); children get a home of their own.
        return Settings.of("airlock.container", "no", "airlock.home-mode", "profile");
    }

    @Override
    protected Environment openEnvironment(OpenContext context) {
        return new HostSampleProvider().open(context);
    }
}
