package dev.airlock.vercel;

import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.settings.Settings;
import dev.airlock.vercel.emulator.VercelEmulator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/** A Vercel emulator on loopback for one test class, and the settings that point the backend at it. */
final class VercelEmulatorFixture implements AutoCloseable {
    static final String TOKEN = "vercel-test-token-0123456789";
    static final String TEAM = "team_airlock";
    final VercelEmulator emulator;
    final CallJournal journal = new CallJournal();
    final FaultPlan faults;
    private final Path state;

    VercelEmulatorFixture(FaultPlan faults) {
        this(faults, Settings.empty());
    }

    /** {@code emulatorSettings}: the emulator's own (its rate limits). */
    VercelEmulatorFixture(FaultPlan faults, Settings emulatorSettings) {
        this.faults = faults;
        try {
            this.state = Files.createTempDirectory("airlock-vercel-emulator-");
            this.emulator = new VercelEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0), state,
                    SandboxIsolation.detect(Settings.empty()), faults, journal, emulatorSettings,
                    java.util.Map.of(VercelEmulator.TOKEN_VARIABLE, TOKEN, VercelEmulator.TEAM_VARIABLE, TEAM)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Settings settings() {
        return Settings.of("airlock.backend", "vercel", "airlock.vercel.api-url", emulator.url().toString(),
                "airlock.vercel.token", TOKEN, "airlock.vercel.project-id", "prj_airlock_test",
                "airlock.vercel.team-id", TEAM, "airlock.vercel.retry.initial-backoff", "10ms");
    }

    @Override
    public void close() {
        emulator.close();
        try (var paths = Files.walk(state)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temp dir
        }
    }
}
