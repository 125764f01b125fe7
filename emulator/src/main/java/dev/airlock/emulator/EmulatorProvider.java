package dev.airlock.emulator;

import java.io.IOException;

/**
 * A cloud service's emulator, found by {@link java.util.ServiceLoader}: each backend module lists
 * its own in {@code META-INF/services/dev.airlock.emulator.EmulatorProvider}, and
 * {@code airlock emulator NAME} serves it ({@link Emulators#serve}).
 */
public interface EmulatorProvider {
    /** The name {@code airlock emulator NAME} takes: {@code modal}, {@code daytona}, {@code vercel}. */
    String name();

    /** One line for listings. */
    String description();

    /** Starts serving on {@code context.listen()}; the emulator runs until closed. */
    Emulator start(EmulatorContext context) throws IOException;
}
