package dev.airlock.daytona;

import dev.airlock.Environment;
import dev.airlock.daytona.emulator.DaytonaEmulator;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The compatibility kit against the Daytona emulator, over the real REST client. */
class DaytonaCompatibilityTest extends EnvironmentCompatibilityKit {
    static DaytonaEmulator emulator;
    static CallJournal journal;
    static Path state;

    @BeforeAll
    static void startEmulator() throws IOException {
        state = Files.createTempDirectory("airlock-daytona-kit-");
        journal = new CallJournal();
        emulator = new DaytonaEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0), state,
                SandboxIsolation.detect(Settings.empty()), FaultPlan.none(), journal, Settings.empty()));
    }

    @AfterAll
    static void stopEmulator() {
        try {
            // Every staged file was 0600 before any command could read it.
            for (String c : emulator.chmods()) {
                if (c.contains("/.airlock-stdin-") || c.contains("/.airlock-script-")) {
                    assertTrue(c.endsWith(" 600"), "a staged file was not 0600: " + c);
                }
            }
            assertTrue(emulator.chmods().stream().anyMatch(c -> c.contains("/.airlock-stdin-")), "no staged stdin seen");
            journal.assertNoDoubleDispatch();
        } finally {
            emulator.close();
        }
    }

    @Override
    protected Settings settings() {
        return Settings.of(DaytonaSettings.API_URL, emulator.url().toString(), DaytonaSettings.API_KEY, "kit-key-0123456789");
    }

    @Override
    protected Environment openEnvironment(OpenContext context) {
        return new DaytonaProvider().open(context);
    }

    @Override
    protected Optional<Environment> attach(Environment to) {
        String id = ((DaytonaEnvironment) to).sandboxId();
        return Optional.of(openEnvironment(OpenContext.of(settings().with(DaytonaSettings.SANDBOX_ID, id))));
    }

    @Override
    protected java.util.Collection<String> secrets() {
        return List.of("kit-key-0123456789");
    }
}
