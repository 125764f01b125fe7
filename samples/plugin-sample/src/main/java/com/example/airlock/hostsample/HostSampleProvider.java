package com.example.airlock.hostsample;

import dev.airlock.BackendUnavailableException;
import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.OpenContext;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The sample backend's provider, found by {@link java.util.ServiceLoader} through
 * {@code META-INF/services/dev.airlock.spi.EnvironmentProvider}: users pick it with
 * {@code airlock.backend=host-sample}.
 */
public final class HostSampleProvider implements EnvironmentProvider {

    @Override
    public String name() {
        return "host-sample";
    }

    @Override
    public Availability check(Settings settings) {
        if (!Files.isDirectory(Path.of("/proc/self"))) {
            return Availability.unavailable("the host-sample backend needs Linux with /proc mounted");
        }
        if (HostSampleBackend.onPath("setsid").isEmpty()) {
            return Availability.unavailable("setsid is not on PATH; install util-linux");
        }
        return Availability.ok("processes on this host (sample plugin)");
    }

    @Override
    public Environment open(OpenContext context) {
        Availability a = check(context.settings());
        if (!a.available()) {
            throw new BackendUnavailableException("host-sample backend: " + a.reason());
        }
        // The core does the rest: probe, containment, staging, the exec flow, kills, files.
        return context.open(new HostSampleBackend());
    }
}
