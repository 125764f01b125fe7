package dev.airlock.modal.emulator;

import dev.airlock.emulator.Emulator;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.EmulatorProvider;

import java.io.IOException;

/** {@code airlock emulator modal}: Modal's control plane and task command router over gRPC (see {@link ModalEmulator}). */
public final class ModalEmulatorProvider implements EmulatorProvider {
    @Override
    public String name() {
        return "modal";
    }

    @Override
    public String description() {
        return "Modal's gRPC API (ModalClient V1/V2 sandboxes, TaskCommandRouter execs) on loopback";
    }

    @Override
    public Emulator start(EmulatorContext context) throws IOException {
        return new ModalEmulator(context);
    }
}
