package dev.airlock.modal;

import dev.airlock.Environment;
import dev.airlock.Payload;
import dev.airlock.emulator.ForkedEmulator;
import dev.airlock.emulator.TransferCheck;
import dev.airlock.modal.emulator.ModalEmulator;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A measurement, not a test: the Modal emulator's heap for one 64 MiB transfer, in a JVM of its
 * own with {@code -Xmx} {@code args[0]} that exits on an OutOfMemoryError. {@code args[1]} is the
 * leg: {@code write} or {@code read} by the backend's client, {@code fs-write} or {@code fs-read}
 * by fs-tools (the SDKs' path). A read leg writes its file first, outside the measurement. Prints
 * {@code LEG HEAP: peak heap ...} or {@code LEG HEAP: FAILED ...}. Run with the test classpath.
 */
public final class ModalEmulatorHeapProbe {
    public static void main(String[] args) throws Exception {
        long size = 64L << 20;
        String leg = args[1];
        Path tmp = Files.createTempDirectory("modal-heap-probe");
        try (ForkedEmulator e = ForkedEmulator.start("modal", List.of("-Xmx" + args[0], "-XX:+ExitOnOutOfMemoryError",
                        "-Dairlock.emulator.state-dir=" + tmp.resolve("state")),
                System.getProperty("java.class.path"), Map.of(ModalEmulator.TOKEN_ID_VARIABLE, "ak-probe",
                        ModalEmulator.TOKEN_SECRET_VARIABLE, "as-probe-secret"), tmp.resolve("emulator.log"))) {
            Settings s = Settings.of(Map.of(ModalSettings.SERVER_URL, e.url().toString(),
                    ModalSettings.TOKEN_ID, "ak-probe", ModalSettings.TOKEN_SECRET, "as-probe-secret"));
            e.report(leg, args[0], () -> {
                if (leg.startsWith("fs-")) {
                    try (ModalClient client = ModalProvider.client(s); ModalSandbox sb = ModalSandbox.create(client, false)) {
                        if (leg.equals("fs-read")) {
                            FsToolsTransfer.write(sb, "/tmp/b.bin", size, 2);
                        }
                        e.heapPeak();
                        if (leg.equals("fs-read")) {
                            FsToolsTransfer.read(sb, "/tmp/b.bin");
                        } else {
                            FsToolsTransfer.write(sb, "/tmp/b.bin", size, 2);
                        }
                        return e.heapPeak().toString();
                    }
                }
                try (Environment env = new ModalProvider().open(OpenContext.of(s))) {
                    return e.transferPeak(env, leg, size).toString();
                }
            });
        }
        System.exit(0);
    }

    private ModalEmulatorHeapProbe() {
    }
}
