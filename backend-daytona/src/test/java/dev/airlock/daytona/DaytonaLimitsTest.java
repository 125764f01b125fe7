package dev.airlock.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.AirlockException;
import dev.airlock.daytona.emulator.DaytonaEmulator;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The service's per-sandbox maximums (default tier: 4 vCPUs, 8 GB memory, 10 GB disk): a create
 * over one is refused 403 Forbidden with the service's message and nothing is made; the client
 * shows it in one line.
 */
class DaytonaLimitsTest {
    static final String KEY = "limits-test-key-52c0aa";
    static final MediaType JSON = MediaType.get("application/json");

    @TempDir
    Path state;
    DaytonaEmulator emulator;

    @BeforeEach
    void start() throws Exception {
        emulator = new DaytonaEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0), state,
                SandboxIsolation.detect(Settings.empty()), FaultPlan.none(), new CallJournal(), Settings.empty(),
                Map.of(DaytonaEmulator.API_KEY_VARIABLE, KEY)));
    }

    @AfterEach
    void stop() {
        emulator.close();
    }

    @Test
    void eachResourceOverItsMaximumIsRefused403WithTheServiceMessage() throws Exception {
        assertRefused("\"cpu\":512", "CPU request 512 exceeds maximum allowed per sandbox (4)");
        assertRefused("\"memory\":100000", "Memory request 100000GB exceeds maximum allowed per sandbox (8GB)");
        assertRefused("\"disk\":100000", "Disk request 100000GB exceeds maximum allowed per sandbox (10GB)");
        assertEquals(List.of(), emulator.sandboxIds(), "nothing made over a limit");
    }

    @Test
    void theMaximumsThemselvesAreAllowed() throws Exception {
        try (Response r = create("\"cpu\":4,\"memory\":8,\"disk\":10")) {
            assertEquals(200, r.code(), r.body().string());
        }
    }

    @Test
    void theClientSaysSoInOneLine() {
        Settings s = Settings.of(DaytonaSettings.API_URL, emulator.url().toString(), DaytonaSettings.API_KEY, KEY,
                DaytonaSettings.IMAGE, "debian:12", DaytonaSettings.CPU, "512");
        AirlockException e = assertThrows(AirlockException.class, () -> new DaytonaProvider().open(OpenContext.of(s)).close());
        assertEquals("Daytona denied sandbox create (403) (CPU request 512 exceeds maximum allowed per sandbox (4));"
                + " the request is over a limit of the account: ask for less, or raise the limit", e.getMessage());
        assertEquals(List.of(), emulator.sandboxIds());
    }

    private void assertRefused(String resources, String message) throws Exception {
        try (Response r = create(resources)) {
            JsonNode body = new ObjectMapper().readTree(r.body().string());
            assertEquals(403, r.code(), body.toString());
            assertEquals(403, body.path("statusCode").asInt(), body.toString());
            assertEquals("Forbidden", body.path("error").asText(), body.toString());
            assertEquals(message, body.path("message").asText(), body.toString());
        }
    }

    private Response create(String resources) throws Exception {
        String body = "{\"buildInfo\":{\"dockerfileContent\":\"FROM debian:12\"}," + resources + "}";
        return new OkHttpClient().newCall(new Request.Builder().url(emulator.url() + "/sandbox")
                .header("Authorization", "Bearer " + KEY).post(RequestBody.create(body, JSON)).build()).execute();
    }
}
