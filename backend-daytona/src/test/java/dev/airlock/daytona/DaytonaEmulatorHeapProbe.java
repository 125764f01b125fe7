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
            String result;
            try (Environment env = new DaytonaProvider().open(OpenContext.of(s))) {
                if (leg.equals("read")) {
                    env.files().write("/tmp/a.bin", Payload.ofStream(TransferCheck.pseudoRandom(size, 1), size));
                }
                e.heapPeak();
                if (leg.equals("read")) {
                    try (InputStream in = env.files().read("/tmp/a.bin")) {
                        TransferCheck.sha256(in);
                    }
                } else {
                    env.files().write("/tmp/a.bin", Payload.ofStream(TransferCheck.pseudoRandom(size, 1), size));
                }
                result = e.heapPeak().toString();
            } catch (Exception | Error failed) {
                result = "FAILED" + (e.alive() ? " " + failed : " (the emulator ran out of heap)");
            }
            System.out.println(leg + " " + args[0] + ": " + result);
        }
        System.exit(0);
    }

    private DaytonaEmulatorHeapProbe() {
    }
}
