package dev.airlock.vercel.emulator;

import dev.airlock.emulator.Emulator;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.EmulatorProvider;

import java.io.IOException;

/** {@code airlock emulator vercel}: Vercel Sandbox's REST API on loopback (see {@link VercelEmulator}). */
public final class VercelEmulatorProvider implements EmulatorProvider {
    @Override
    public String name() {
        return "vercel";
    }

    @Override
    public String description() {
        return "Vercel Sandbox's REST API (v2 sessions, v3 create), as @vercel/sandbox 3.5 speaks it";
    }

    @Override
    public Emulator start(EmulatorContext context) throws IOException {
        return new VercelEmulator(context);
    }
}
