package dev.airlock.daytona;

import dev.airlock.Environment;
import dev.airlock.daytona.emulator.DaytonaEmulator;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A Daytona emulator on loopback under a test's own directory, and the settings that point the client at it. */
final class DaytonaEmulatorFixture implements AutoCloseable {
    static final String KEY = "env-test-key-0123456789";

    final DaytonaEmulator emulator;
    final CallJournal journal = new CallJournal();
    final FaultPlan faults;

    DaytonaEmulatorFixture(Path state, FaultPlan faults) throws IOException {
        this.faults = faults;
        this.emulator = new DaytonaEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0), state,
                SandboxIsolation.detect(Settings.empty()), faults, journal, Settings.empty(), Map.of(DaytonaEmulator.API_KEY_VARIABLE, KEY)));
    }

    /** The emulator's address and key, fast retries (a fault campaign waits through many), then {@code more}. */
    Settings settings(String... more) {
        List<String> kv = new ArrayList<>(List.of(DaytonaSettings.API_URL, emulator.url().toString(), DaytonaSettings.API_KEY, KEY,
                "airlock.daytona.retry.initial-backoff", "10ms", "airlock.daytona.retry.max-backoff", "50ms",
                "airlock.daytona.retry.max-attempts", "6", "airlock.daytona.breaker.failures", "1000"));
        kv.addAll(List.of(more));
        return Settings.of(kv.toArray(String[]::new));
    }

    Environment open(Settings s) {
        return new DaytonaProvider().open(OpenContext.of(s));
    }

    /** Staged stdin files left in the environment's sandbox. */
    List<String> stagedLeft(Environment env) throws IOException {
        return emulator.find(DaytonaBackend.of(env).sandboxId(), "/tmp", ".airlock-stdin-");
    }

    /** Output files of execs left in the environment's sandbox. */
    List<String> outputsLeft(Environment env) throws IOException {
        List<String> out = new ArrayList<>(emulator.find(DaytonaBackend.of(env).sandboxId(), "/tmp", ""));
        out.removeIf(p -> !(p.endsWith(".out") || p.endsWith(".err")));
        return out;
    }

    @Override
    public void close() {
        emulator.close();
    }
}
