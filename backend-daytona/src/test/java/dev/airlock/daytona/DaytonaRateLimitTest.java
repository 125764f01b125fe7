package dev.airlock.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.AirlockException;
import dev.airlock.Environment;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Daytona's documented rate limits (sandbox creation: 600 per 60 s, and its other buckets), here
 * made small by the emulator's setting: a create over the limit is refused 429 with
 * {@code Retry-After-sandbox-create} and the {@code X-RateLimit-*-sandbox-create} headers, and
 * nothing is made; the client waits a short Retry-After out, and says a long one in one line.
 */
class DaytonaRateLimitTest {
    static final String KEY = "rate-test-key-7d21c9";
    static final MediaType JSON = MediaType.get("application/json");

    @TempDir
    Path state;
    DaytonaEmulator emulator;

    private DaytonaEmulator start(String createLimit) throws Exception {
        emulator = new DaytonaEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0), state,
                SandboxIsolation.detect(Settings.empty()), FaultPlan.none(), new CallJournal(),
                Settings.of(DaytonaEmulator.RATE_LIMIT_PREFIX + ".sandbox-create", createLimit),
                Map.of(DaytonaEmulator.API_KEY_VARIABLE, KEY)));
        return emulator;
    }

    @AfterEach
    void stop() {
        if (emulator != null) {
            emulator.close();
        }
    }

    @Test
    void aCreateOverTheLimitIs429WithTheBucketsHeaders() throws Exception {
        start("2/600");
        try (Response first = create()) {
            assertEquals(200, first.code(), first.body().string());
            assertEquals("2", first.header("X-RateLimit-Limit-sandbox-create"));
            assertEquals("1", first.header("X-RateLimit-Remaining-sandbox-create"));
        }
        try (Response second = create()) {
            assertEquals(200, second.code());
            assertEquals("0", second.header("X-RateLimit-Remaining-sandbox-create"));
        }
        int made = emulator.sandboxIds().size();
        try (Response third = create()) {
            JsonNode body = new ObjectMapper().readTree(third.body().string());
            assertEquals(429, third.code(), body.toString());
            assertEquals(429, body.path("statusCode").asInt(), body.toString());
            assertEquals("Too Many Requests", body.path("error").asText(), body.toString());
            assertEquals("ThrottlerException: Too Many Requests", body.path("message").asText(), body.toString());
            long wait = Long.parseLong(third.header("Retry-After-sandbox-create"));
            assertTrue(wait > 590 && wait <= 600, "Retry-After-sandbox-create: " + wait);
            assertEquals("0", third.header("X-RateLimit-Remaining-sandbox-create"));
        }
        assertEquals(made, emulator.sandboxIds().size(), "nothing made over the limit");
        // Other buckets count on their own.
        try (Response list = new OkHttpClient().newCall(new Request.Builder().url(emulator.url() + "/sandbox")
                .header("Authorization", "Bearer " + KEY).build()).execute()) {
            assertEquals(200, list.code());
            assertEquals("50000", list.header("X-RateLimit-Limit-authenticated"));
        }
    }

    @Test
    void theClientSaysTheWaitInOneLine() throws Exception {
        start("1/600");
        try (Environment first = new DaytonaProvider().open(OpenContext.of(settings()))) {
            assertEquals(0, first.exec(dev.airlock.ExecRequest.of("true")).exitCode());
        }
        int made = emulator.sandboxIds().size();
        AirlockException e = assertThrows(AirlockException.class, () -> new DaytonaProvider().open(OpenContext.of(settings())).close());
        assertTrue(e.getMessage().matches("Daytona rate limited sandbox create \\(429\\); it asks to wait (5\\d\\d|600) s;"
                + " try again later or lower the concurrency"), e.getMessage());
        assertEquals(made, emulator.sandboxIds().size(), "nothing made over the limit");
    }

    /** A create is never sent twice by the client (it is not idempotent); once the wait is over, it goes through. */
    @Test
    void onceTheWindowIsOverACreateGoesThrough() throws Exception {
        start("1/2");
        try (Environment first = new DaytonaProvider().open(OpenContext.of(settings()))) {
            AirlockException e = assertThrows(AirlockException.class, () -> new DaytonaProvider().open(OpenContext.of(settings())).close());
            assertTrue(e.getMessage().matches("Daytona rate limited sandbox create \\(429\\); it asks to wait [12] s;"
                    + " try again later or lower the concurrency"), e.getMessage());
            assertEquals(2, emulator.journal().entries("sandbox-create").size(), "the refused create was not sent again");
            Thread.sleep(2_100);
            try (Environment second = new DaytonaProvider().open(OpenContext.of(settings()))) {
                assertEquals(0, second.exec(dev.airlock.ExecRequest.of("true")).exitCode());
            }
        }
    }

    private Settings settings() {
        return Settings.of(DaytonaSettings.API_URL, emulator.url().toString(), DaytonaSettings.API_KEY, KEY,
                DaytonaSettings.IMAGE, "debian:12");
    }

    private Response create() throws Exception {
        String body = "{\"buildInfo\":{\"dockerfileContent\":\"FROM debian:12\"}}";
        return new OkHttpClient().newCall(new Request.Builder().url(emulator.url() + "/sandbox")
                .header("Authorization", "Bearer " + KEY).post(RequestBody.create(body, JSON)).build()).execute();
    }
}
