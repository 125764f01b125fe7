package dev.airlock.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.Environment;
import dev.airlock.emulator.ForkedEmulator;
import dev.airlock.emulator.TransferCheck;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.vercel.emulator.VercelEmulator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Vercel emulator streams: 256 MiB through it, against the emulator in a JVM of its own with a
 * 96 MiB heap that exits on an OutOfMemoryError, so a transfer held whole in the emulator's heap
 * cannot pass, whatever the machine's load ({@code -Dairlock.emulator.memory.bytes} for more).
 * Both the backend's path ({@code files().write} as gzipped tars of 8 MiB parts, {@code files().read},
 * an exec's stdout) and the SDK's: {@code writeFiles} (the whole file as one tar entry),
 * {@code readFile}, and {@code runCommand}'s output, which comes as the command's NDJSON logs.
 */
class VercelEmulatorMemoryTest {
    private static final String TOKEN = "vercel-memory-test-token";
    private static final String TEAM = "team_memory";
    private static final long SIZE = Long.getLong("airlock.emulator.memory.bytes", 256L << 20);
    private static final String LINE = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n";

    @TempDir
    static Path tmp;
    private static ForkedEmulator emulator;

    @BeforeAll
    static void start() throws IOException {
        emulator = ForkedEmulator.start("vercel", List.of("-Xmx96m", "-XX:+ExitOnOutOfMemoryError",
                        "-Dairlock.emulator.state-dir=" + tmp.resolve("state")), System.getProperty("java.class.path"),
                Map.of(VercelEmulator.TOKEN_VARIABLE, TOKEN, VercelEmulator.TEAM_VARIABLE, TEAM), tmp.resolve("emulator.log"));
    }

    @AfterAll
    static void stop() {
        if (emulator != null) {
            emulator.close();
        }
    }

    private static Settings settings() {
        return Settings.of("airlock.vercel.api-url", emulator.url().toString(), "airlock.vercel.token", TOKEN,
                "airlock.vercel.project-id", "prj_memory", "airlock.vercel.team-id", TEAM);
    }

    @Test
    void theBackendsWriteReadAndStdoutStreamThroughTheEmulator() throws Exception {
        List<String> problems = emulator.outliving(() -> {
            try (Environment env = new VercelProvider().open(OpenContext.of(settings()))) {
                return TransferCheck.run(env, "/tmp/big.bin", SIZE);
            }
        });
        assertEquals(List.of(), problems);
    }

    @Test
    void theSdksWholeFileWriteAndReadStreamThroughTheEmulator() throws Exception {
        Settings raw = settings();
        String read = emulator.outliving(() -> {
            try (VercelApi api = new VercelApi(VercelSettings.from(raw, Map.of()), raw)) {
                VercelApi.SessionInfo s = api.create(Map.of());
                try {
                    // One tar entry of the whole file, as the SDK's writeFiles sends it (the backend sends 8 MiB parts).
                    api.write(s.sessionId(), "/tmp/sdk.bin", 0644, new VercelApi.TarSource() {
                        @Override
                        public long size() {
                            return SIZE;
                        }

                        @Override
                        public void writeTo(java.io.OutputStream out) throws IOException {
                            TransferCheck.pseudoRandom(SIZE, 38).transferTo(out);
                        }
                    });
                    return TransferCheck.sha256(api.read(s.sessionId(), "/tmp/sdk.bin"));
                } finally {
                    api.delete(s.sandboxName());
                }
            }
        });
        assertEquals(TransferCheck.sha256(TransferCheck.pseudoRandom(SIZE, 38)), read);
    }

    @Test
    void aCommandsLogsOfAPayloadAboveTheHeapStreamThroughTheEmulator() throws Exception {
        Settings raw = settings();
        ObjectMapper json = new ObjectMapper();
        MessageDigest got = MessageDigest.getInstance("SHA-256");
        long[] count = {0};
        int exit = emulator.outliving(() -> {
            try (VercelApi api = new VercelApi(VercelSettings.from(raw, Map.of()), raw)) {
                VercelApi.SessionInfo s = api.create(Map.of());
                try {
                    String cmd = api.run(s.sessionId(), List.of("sh", "-c", "yes '" + LINE.strip() + "' | head -c " + SIZE), null);
                    api.followLogs(s.sessionId(), cmd, line -> {
                        try {
                            JsonNode n = json.readTree(line);
                            if (n.path("stream").asText().equals("stdout")) {
                                byte[] b = n.path("data").asText().getBytes(StandardCharsets.UTF_8);
                                got.update(b);
                                count[0] += b.length;
                            }
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
                    return api.await(s.sessionId(), cmd);
                } finally {
                    api.delete(s.sandboxName());
                }
            }
        });
        assertEquals(0, exit);
        assertEquals(SIZE, count[0]);
        assertEquals(TransferCheck.sha256(repeated(LINE, SIZE)), HexFormat.of().formatHex(got.digest()));
    }

    /** {@code line} repeated, cut at {@code size} bytes: what {@code yes | head -c} prints. */
    private static InputStream repeated(String line, long size) {
        byte[] l = line.getBytes(StandardCharsets.US_ASCII);
        return new InputStream() {
            private long pos;

            @Override
            public int read() {
                return pos < size ? l[(int) (pos++ % l.length)] : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (pos >= size) {
                    return -1;
                }
                int n = (int) Math.min(len, size - pos);
                for (int i = 0; i < n; i++) {
                    b[off + i] = l[(int) (pos++ % l.length)];
                }
                return n;
            }
        };
    }
}
