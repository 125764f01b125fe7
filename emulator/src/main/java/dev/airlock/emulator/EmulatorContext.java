package dev.airlock.emulator;

import dev.airlock.settings.Settings;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * What an emulator gets to start: where to listen (a loopback address; port 0 picks a free one),
 * a private directory for its sandboxes' roots, the isolation to run commands with, the fault
 * plan, the journal to record into, the settings, and the environment the emulator reads the
 * service's own credential variables from ({@link EmulatorCredentials}; empty: every credential
 * is made at start).
 */
public record EmulatorContext(InetSocketAddress listen, Path stateDir, SandboxIsolation isolation, FaultPlan faults,
                              CallJournal journal, Settings settings, Map<String, String> environment) {
    /** A context with an empty environment: the emulator makes its own credentials. */
    public EmulatorContext(InetSocketAddress listen, Path stateDir, SandboxIsolation isolation, FaultPlan faults,
                           CallJournal journal, Settings settings) {
        this(listen, stateDir, isolation, faults, journal, settings, Map.of());
    }

    public EmulatorContext {
        Objects.requireNonNull(listen, "listen");
        Objects.requireNonNull(stateDir, "stateDir");
        Objects.requireNonNull(isolation, "isolation");
        Objects.requireNonNull(faults, "faults");
        Objects.requireNonNull(journal, "journal");
        Objects.requireNonNull(settings, "settings");
        environment = Map.copyOf(Objects.requireNonNull(environment, "environment"));
    }
}
