package dev.airlock.emulator.reference;

import dev.airlock.emulator.Emulator;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.EmulatorProvider;

import java.io.IOException;

/** {@code airlock emulator reference}: the plumbing's own example service (see {@link ReferenceEmulator}). */
public final class ReferenceEmulatorProvider implements EmulatorProvider {
    @Override
    public String name() {
        return "reference";
    }

    @Override
    public String description() {
        return "a minimal REST sandbox service showing how an emulator plugs in (not a real cloud API)";
    }

    @Override
    public Emulator start(EmulatorContext context) throws IOException {
        return new ReferenceEmulator(context);
    }
}
