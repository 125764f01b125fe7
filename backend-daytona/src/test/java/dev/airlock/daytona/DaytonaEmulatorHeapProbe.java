package dev.airlock.daytona;

import dev.airlock.Environment;
import dev.airlock.Payload;
import dev.airlock.daytona.emulator.DaytonaEmulator;
import dev.airlock.emulator.ForkedEmulator;
import dev.airlock.emulator.TransferCheck;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A measurement, not a test: the Daytona emulator's heap for one 64 MiB {@code write} or
 * {@code read} ({@code args[1]}) by the backend's client, in a JVM of its own with {@code -Xmx}
 * {@code args[0]} that exits on an OutOfMemoryError. A read writes its file first, outside the
 * measurement. Prints {@code LEG HEAP: peak heap ...} or {@code LEG HEAP: FAILED ...}. Run with
 * the test classpath.
 */
public final class DaytonaEmulatorHeapProbe {
    public static void main(String[] args) throws Exception {
        long size = 64L << 20;
        String leg = args[1];
        Path tmp = Files.createTempDirectory("daytona-heap-probe");
        try (ForkedEmulator e = ForkedEmulator.start("daytona", List.of("-Xmx" + args[0], "-XX:+ExitOnOutOfMemoryError",
                        "-Dairlock.emulator.state-dir=" + tmp.resolve("state")), System.getProperty("java.class.path"),
                Map.of(DaytonaEmulator.API_KEY_VARIABLE, "dtn_probe"), tmp.resolve("emulator.log"))) {
            Settings s = Settings.of(DaytonaSettings.API_URL, e.url().toString(), DaytonaSettings.API_KEY, "dtn_probe");
            e.report(leg, args[0], () -> {
                try (Environment env = new DaytonaProvider().open(OpenContext.of(s))) {
                    return e.transferPeak(env, leg, size).toString();
                }
            });
        }
        System.exit(0);
    }

    private DaytonaEmulatorHeapProbe() {
    }
}
