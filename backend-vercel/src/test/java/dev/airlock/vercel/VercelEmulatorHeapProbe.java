package dev.airlock.vercel;

import dev.airlock.Environment;
import dev.airlock.Payload;
import dev.airlock.emulator.ForkedEmulator;
import dev.airlock.emulator.TransferCheck;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.vercel.emulator.VercelEmulator;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A measurement, not a test: the Vercel emulator's heap for one 64 MiB transfer, in a JVM of its
 * own with {@code -Xmx} {@code args[0]} that exits on an OutOfMemoryError. {@code args[1]} is the
 * leg: {@code write} or {@code read} by the backend's client, or {@code logs}: 64 MiB of a
 * command's output read as its NDJSON logs (the SDK's runCommand output). A read leg writes its
 * file first, outside the measurement. Prints {@code LEG HEAP: peak heap ...} or
 * {@code LEG HEAP: FAILED ...}. Run with the test classpath.
 */
public final class VercelEmulatorHeapProbe {
    public static void main(String[] args) throws Exception {
        long size = 64L << 20;
        String leg = args[1];
        Path tmp = Files.createTempDirectory("vercel-heap-probe");
        try (ForkedEmulator e = ForkedEmulator.start("vercel", List.of("-Xmx" + args[0], "-XX:+ExitOnOutOfMemoryError",
                        "-Dairlock.emulator.state-dir=" + tmp.resolve("state")), System.getProperty("java.class.path"),
                Map.of(VercelEmulator.TOKEN_VARIABLE, "probe-token", VercelEmulator.TEAM_VARIABLE, "team_probe"),
                tmp.resolve("emulator.log"))) {
            Settings s = Settings.of("airlock.vercel.api-url", e.url().toString(), "airlock.vercel.token", "probe-token",
                    "airlock.vercel.project-id", "prj_probe", "airlock.vercel.team-id", "team_probe");
            e.report(leg, args[0], () -> {
                if (!leg.equals("logs")) {
                    try (Environment env = new VercelProvider().open(OpenContext.of(s))) {
                        return e.transferPeak(env, leg, size).toString();
                    }
                }
                try (VercelApi api = new VercelApi(VercelSettings.from(s, Map.of()), s)) {
                    VercelApi.SessionInfo info = api.create(Map.of());
                    try {
                        e.heapPeak();
                        String cmd = api.run(info.sessionId(), List.of("sh", "-c", "yes 0123456789abcdef | head -c " + size), null);
                        long[] n = {0};
                        api.followLogs(info.sessionId(), cmd, line -> n[0] += line.length());
                        api.await(info.sessionId(), cmd);
                        return e.heapPeak() + " (" + (n[0] >> 20) + " MiB of NDJSON)";
                    } finally {
                        api.delete(info.sandboxName());
                    }
                }
            });
        }
        System.exit(0);
    }

    private VercelEmulatorHeapProbe() {
    }
}
