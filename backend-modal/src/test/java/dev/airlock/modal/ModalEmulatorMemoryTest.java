package dev.airlock.modal;

import dev.airlock.Environment;
import dev.airlock.emulator.ForkedEmulator;
import dev.airlock.emulator.TransferCheck;
import dev.airlock.modal.emulator.ModalEmulator;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Modal emulator streams: 256 MiB through it, against the emulator in a JVM of its own with a
 * 96 MiB heap that exits on an OutOfMemoryError, so a transfer held whole in the emulator's heap
 * cannot pass, whatever the machine's load ({@code -Dairlock.emulator.memory.bytes} for more).
 * Both paths: the backend's own ({@code files().write}, {@code files().read}, an exec's stdout)
 * and the official SDKs' ({@code modal-sandbox-fs-tools} WriteFile and ReadFile).
 */
class ModalEmulatorMemoryTest {
    private static final String TOKEN_ID = "ak-memory-test";
    private static final String TOKEN_SECRET = "as-memory-test-secret";
    private static final long SIZE = Long.getLong("airlock.emulator.memory.bytes", 256L << 20);

    @TempDir
    static Path tmp;
    private static ForkedEmulator emulator;

    @BeforeAll
    static void start() throws IOException {
        emulator = ForkedEmulator.start("modal", List.of("-Xmx96m", "-XX:+ExitOnOutOfMemoryError",
                        "-Dairlock.emulator.state-dir=" + tmp.resolve("state")), System.getProperty("java.class.path"),
                Map.of(ModalEmulator.TOKEN_ID_VARIABLE, TOKEN_ID, ModalEmulator.TOKEN_SECRET_VARIABLE, TOKEN_SECRET),
                tmp.resolve("emulator.log"));
    }

    @AfterAll
    static void stop() {
        if (emulator != null) {
            emulator.close();
        }
    }

    private static Settings settings() {
        return Settings.of(Map.of(ModalSettings.SERVER_URL, emulator.url().toString(),
                ModalSettings.TOKEN_ID, TOKEN_ID, ModalSettings.TOKEN_SECRET, TOKEN_SECRET));
    }

    @Test
    void theBackendsWriteReadAndStdoutStreamThroughTheEmulator() throws Exception {
        List<String> problems = emulator.outliving(() -> {
            try (Environment env = new ModalProvider().open(OpenContext.of(settings()))) {
                return TransferCheck.run(env, "/tmp/big.bin", SIZE);
            }
        });
        assertEquals(List.of(), problems);
    }

    @Test
    void theSdksFsToolsWriteAndReadStreamThroughTheEmulator() throws Exception {
        String read = emulator.outliving(() -> {
            try (ModalClient client = ModalProvider.client(settings()); ModalSandbox sb = ModalSandbox.create(client, false)) {
                FsToolsTransfer.write(sb, "/tmp/fs.bin", SIZE, 36);
                return FsToolsTransfer.read(sb, "/tmp/fs.bin");
            }
        });
        assertEquals(TransferCheck.sha256(TransferCheck.pseudoRandom(SIZE, 36)), read);
    }
}
