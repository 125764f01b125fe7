package dev.airlock.daytona.emulator;

import dev.airlock.emulator.Emulator;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.EmulatorProvider;

import java.io.IOException;

/** {@code airlock emulator daytona}: Daytona's control and toolbox APIs on loopback (see {@link DaytonaEmulator}). */
public final class DaytonaEmulatorProvider implements EmulatorProvider {
    @Override
    public String name() {
        return "daytona";
    }

    @Override
    public String description() {
        return "Daytona's REST API (control + toolbox); the URL printed is DAYTONA_API_URL";
    }

    @Override
    public Emulator start(EmulatorContext context) throws IOException {
        return new DaytonaEmulator(context);
    }
}
