package dev.airlock.vercel;

import dev.airlock.emulator.FaultPlan;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The REST client against the emulator, one call at a time. */
class VercelApiTest {
    VercelEmulatorFixture fixture = new VercelEmulatorFixture(FaultPlan.none());

    @AfterEach
    void close() {
        fixture.close();
    }

    @Test
    void runWaitAndReadBack() throws Exception {
        VercelSettings s = VercelSettings.from(fixture.settings(), Map.of());
        try (VercelApi api = new VercelApi(s, fixture.settings())) {
            VercelApi.SessionInfo info = api.create(VercelBackend.tags(false));
            String cmd = api.run(info.sessionId(), List.of("sh", "-c", "mkdir -p /tmp/x && echo hi > /tmp/x/o; exit 7"), null);
            assertEquals(7, api.await(info.sessionId(), cmd));
            try (InputStream in = api.read(info.sessionId(), "/tmp/x/o")) {
                assertEquals("hi\n", new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
    }

    /** A runtime is created through v2 ({@code POST /v2/sandboxes}), an image through v3: both run commands. */
    @Test
    void aRuntimeSandboxIsCreatedThroughV2AndRuns() {
        dev.airlock.settings.Settings raw = fixture.settings().with(VercelSettings.RUNTIME, "node22");
        try (VercelApi api = new VercelApi(VercelSettings.from(raw, Map.of()), raw)) {
            VercelApi.SessionInfo info = api.create(VercelBackend.tags(false));
            assertEquals(0, api.await(info.sessionId(), api.run(info.sessionId(), List.of("true"), null)));
        }
        assertEquals(1, fixture.journal.entries("sandbox-create").size());
    }
}
