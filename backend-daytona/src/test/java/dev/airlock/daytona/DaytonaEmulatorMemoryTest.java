package dev.airlock.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.Environment;
import dev.airlock.daytona.emulator.DaytonaEmulator;
import dev.airlock.emulator.ForkedEmulator;
import dev.airlock.emulator.TransferCheck;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Daytona emulator streams: 256 MiB through it, against the emulator in a JVM of its own with
 * a 96 MiB heap that exits on an OutOfMemoryError, so a transfer held whole in the emulator's heap
 * cannot pass, whatever the machine's load ({@code -Dairlock.emulator.memory.bytes} for more).
 * Both the backend's path ({@code files().write} by upload-v2, {@code files().read} by download,
 * an exec's stdout) and the SDK's ({@code uploadFile} and {@code downloadFile}: multipart
 * {@code files/bulk-upload} and {@code files/bulk-download}).
 */
class DaytonaEmulatorMemoryTest {
    private static final String KEY = "dtn_memory_test_key";
    private static final long SIZE = Long.getLong("airlock.emulator.memory.bytes", 256L << 20);

    @TempDir
    static Path tmp;
    private static ForkedEmulator emulator;

    @BeforeAll
    static void start() throws IOException {
        emulator = ForkedEmulator.start("daytona", List.of("-Xmx96m", "-XX:+ExitOnOutOfMemoryError",
                        "-Dairlock.emulator.state-dir=" + tmp.resolve("state")), System.getProperty("java.class.path"),
                Map.of(DaytonaEmulator.API_KEY_VARIABLE, KEY), tmp.resolve("emulator.log"));
    }

    @AfterAll
    static void stop() {
        if (emulator != null) {
            emulator.close();
        }
    }

    @Test
    void theBackendsWriteReadAndStdoutStreamThroughTheEmulator() throws Exception {
        Settings s = Settings.of(DaytonaSettings.API_URL, emulator.url().toString(), DaytonaSettings.API_KEY, KEY);
        List<String> problems = emulator.outliving(() -> {
            try (Environment env = new DaytonaProvider().open(OpenContext.of(s))) {
                return TransferCheck.run(env, "/tmp/big.bin", SIZE);
            }
        });
        assertEquals(List.of(), problems);
    }

    @Test
    void theSdksMultipartUploadAndDownloadStreamThroughTheEmulator() throws Exception {
        String read = emulator.outliving(() -> {
            HttpClient http = HttpClient.newHttpClient();
            ObjectMapper json = new ObjectMapper();
            JsonNode box = json.readTree(http.send(request("/sandbox").POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString()).body());
            String id = box.path("id").asText();
            assertTrue(!id.isEmpty(), "no sandbox id in the create answer: " + box);
            String toolbox = box.path("toolboxProxyUrl").asText() + "/" + id;
            try {
                String boundary = "memory-test-boundary";
                InputStream body = new SequenceInputStream(Collections.enumeration(List.of(
                        text("--" + boundary + "\r\nContent-Disposition: form-data; name=\"files[0].path\"\r\n\r\n/tmp/sdk.bin\r\n"
                                + "--" + boundary + "\r\nContent-Disposition: form-data; name=\"files[0].file\"; filename=\"sdk.bin\"\r\n"
                                + "Content-Type: application/octet-stream\r\n\r\n"),
                        TransferCheck.pseudoRandom(SIZE, 37),
                        text("\r\n--" + boundary + "--\r\n"))));
                HttpResponse<String> up = http.send(request(toolbox + "/files/bulk-upload")
                        .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> body)).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, up.statusCode(), up.body());
                HttpResponse<InputStream> down = http.send(request(toolbox + "/files/bulk-download")
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"paths\":[\"/tmp/sdk.bin\"]}")).build(),
                        HttpResponse.BodyHandlers.ofInputStream());
                assertEquals(200, down.statusCode());
                try (InputStream in = down.body()) {
                    skipPartHeaders(in);
                    return TransferCheck.sha256(new LimitedStream(in, SIZE));
                }
            } finally {
                http.send(request("/sandbox/" + id).DELETE().build(), HttpResponse.BodyHandlers.discarding());
            }
        });
        assertEquals(TransferCheck.sha256(TransferCheck.pseudoRandom(SIZE, 37)), read);
    }

    private static HttpRequest.Builder request(String pathOrUrl) {
        String url = pathOrUrl.startsWith("http") ? pathOrUrl : emulator.url() + pathOrUrl;
        return HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + KEY);
    }

    private static InputStream text(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }

    /** Reads the multipart answer up to the end of its first part's headers (the blank line). */
    private static void skipPartHeaders(InputStream in) throws IOException {
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        for (int c; (c = in.read()) >= 0; ) {
            matched = c == end[matched] ? matched + 1 : c == '\r' ? 1 : 0;
            if (matched == end.length) {
                return;
            }
        }
        throw new IOException("the multipart answer ended in its headers");
    }

    /** The next {@code size} bytes of a stream. */
    private static final class LimitedStream extends InputStream {
        private final InputStream in;
        private long left;

        LimitedStream(InputStream in, long size) {
            this.in = in;
            this.left = size;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (left == 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, left));
            if (n > 0) {
                left -= n;
            }
            return n;
        }
    }
}
