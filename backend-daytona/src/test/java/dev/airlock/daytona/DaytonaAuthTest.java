package dev.airlock.daytona;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.daytona.emulator.DaytonaEmulator;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import okhttp3.OkHttpClient;
import okhttp3.Request;
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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The emulator accepts only the key in its environment's {@code DAYTONA_API_KEY} and refuses any
 * other 401 in the control error shape, on the API and the toolbox; the client says so in one
 * line naming the variable, with no key in it, and makes no sandbox.
 */
class DaytonaAuthTest {
    static final String KEY = "auth-test-key-3b9e1d";
    static final String WRONG = "wrong-key-a41c77";

    @TempDir
    Path state;
    DaytonaEmulator emulator;
    CallJournal journal = new CallJournal();

    @BeforeEach
    void start() throws Exception {
        emulator = new DaytonaEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0), state,
                SandboxIsolation.detect(Settings.empty()), FaultPlan.none(), journal, Settings.empty(),
                Map.of(DaytonaEmulator.API_KEY_VARIABLE, KEY)));
    }

    @AfterEach
    void stop() {
        emulator.close();
    }

    @Test
    void aWrongKeyIsRefusedInOneLineWithoutTheKey() {
        Settings s = Settings.of(DaytonaSettings.API_URL, emulator.url().toString(), DaytonaSettings.API_KEY, WRONG);
        AirlockException e = assertThrows(AirlockException.class, () -> new DaytonaProvider().open(OpenContext.of(s)).close());
        assertInstanceOf(ConfigurationException.class, e);
        assertEquals("Daytona refused the credentials for sandbox create (401); check DAYTONA_API_KEY", e.getMessage());
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage());
            assertFalse(m.contains(WRONG) || m.contains(KEY), "a key in " + t.getClass().getName() + ": " + m);
        }
        assertEquals(List.of(), emulator.sandboxIds(), "no sandbox with a refused key");
        journal.assertNoneCarries(WRONG, KEY);
    }

    @Test
    void theServiceShapeOfTheRefusalOnTheApiAndTheToolbox() throws Exception {
        OkHttpClient http = new OkHttpClient();
        String api = emulator.url().toString();
        String toolbox = api.replaceAll("/api$", "") + "/toolbox/any-sandbox/files/info?path=/";
        for (String url : new String[] {api + "/sandbox", toolbox}) {
            for (String auth : new String[] {"Bearer " + WRONG, null}) {
                Request.Builder b = new Request.Builder().url(url);
                if (auth != null) {
                    b.header("Authorization", auth);
                }
                try (Response r = http.newCall(b.build()).execute()) {
                    String body = r.body().string();
                    assertEquals(401, r.code(), url + ": " + body);
                    assertTrue(body.contains("\"statusCode\":401") && body.contains("\"error\":\"Unauthorized\"")
                            && body.contains("\"message\":\"Unauthorized\"") && !body.contains(WRONG), body);
                }
            }
            try (Response ok = http.newCall(new Request.Builder().url(api + "/sandbox").header("Authorization", "Bearer " + KEY)
                    .build()).execute()) {
                assertEquals(200, ok.code());
            }
        }
    }
}
