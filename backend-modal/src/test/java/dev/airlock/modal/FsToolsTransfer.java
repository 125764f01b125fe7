package dev.airlock.modal;

import dev.airlock.emulator.TransferCheck;
import dev.airlock.modal.emulator.ModalEmulator;
import dev.airlock.spi.Deadline;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Files moved the way Modal's official SDKs move them ({@code sandbox.filesystem.writeBytes} and
 * {@code readBytes}): an exec of {@code modal-sandbox-fs-tools} with a {@code WriteFile} or
 * {@code ReadFile} operation, the file's bytes on its stdin or stdout. For the emulator's memory
 * test and its heap measurement; the payload is {@link TransferCheck#pseudoRandom}.
 */
final class FsToolsTransfer {
    static final String FS_TOOLS = "/__modal/.bin/modal-sandbox-fs-tools";
    private static final int CHUNK = 1 << 20;

    private FsToolsTransfer() {
    }

    /** Writes {@code size} bytes of seed {@code seed} to {@code path}; a non-zero exit is an IOException with fs-tools' stderr. */
    static void write(ModalSandbox sb, String path, long size, long seed) throws IOException, InterruptedException {
        ModalProcess p = sb.exec(List.of(FS_TOOLS, "{\"WriteFile\":{\"path\":\"" + path + "\"}}"), Map.of());
        Deadline deadline = Deadline.in(Duration.ofMinutes(5));
        byte[] buf = new byte[Math.min(CHUNK, ModalEmulator.MAX_STDIN_CHUNK)];
        long offset = 0;
        try (InputStream in = TransferCheck.pseudoRandom(size, seed)) {
            for (int n; (n = in.readNBytes(buf, 0, buf.length)) > 0; ) {
                p.writeStdin(offset, buf, n, false, deadline);
                offset += n;
            }
        }
        p.writeStdin(offset, new byte[0], 0, true, deadline);
        finish(p, "WriteFile " + path);
    }

    /** The SHA-256 (hex) of {@code path} as ReadFile's stdout carries it. */
    static String read(ModalSandbox sb, String path) throws IOException, InterruptedException {
        ModalProcess p = sb.exec(List.of(FS_TOOLS, "{\"ReadFile\":{\"path\":\"" + path + "\"}}"), Map.of());
        String digest = TransferCheck.sha256(p.stdout());
        finish(p, "ReadFile " + path);
        return digest;
    }

    private static void finish(ModalProcess p, String what) throws IOException, InterruptedException {
        String err = new String(p.stderr().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        int code = p.waitFor();
        if (code != 0) {
            throw new IOException(what + " exited " + code + ": " + err);
        }
    }
}
