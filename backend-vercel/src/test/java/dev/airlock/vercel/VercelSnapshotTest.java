package dev.airlock.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.Payload;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Snapshots as a user meets them on Vercel: an id that names no snapshot is one line at open and
 * leaves no sandbox; a snapshot outlives the environment it was taken in; and the emulator refuses
 * what the service refuses (an unknown snapshot 404 on get and delete, 410
 * {@code snapshot_not_found} on a create from it, a stopped session 410).
 */
class VercelSnapshotTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    static VercelEmulatorFixture fixture;

    @BeforeAll
    static void start() {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static Environment open(Settings s) {
        return new VercelProvider().open(OpenContext.of(s));
    }

    @Test
    void anUnknownSnapshotIsOneLineAtOpenAndLeavesNoSandbox() {
        int before = fixture.emulator.sandboxNames().size();
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> open(fixture.settings().with(VercelSettings.SNAPSHOT, "snap_nosuchsnapshot")).close());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().contains("snap_nosuchsnapshot") && e.getMessage().contains(VercelSettings.SNAPSHOT), e.getMessage());
        assertEquals(before, fixture.emulator.sandboxNames().size(), "a refused create leaves no sandbox");
    }

    @Test
    void aSnapshotAndASandboxIdAreOneLine() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> open(fixture.settings()
                .with(VercelSettings.SNAPSHOT, "snap_x").with(VercelSettings.SANDBOX_ID, "sbx-x")).close());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().contains(VercelSettings.SNAPSHOT) && e.getMessage().contains(VercelSettings.SANDBOX_ID), e.getMessage());
    }

    /** The environment's close deletes its sandbox, not the snapshot taken in it: the id is what the caller keeps. */
    @Test
    void aSnapshotOutlivesTheEnvironmentItWasTakenIn() {
        String id;
        try (Environment env = open(fixture.settings())) {
            env.files().write("/tmp/kept", Payload.ofUtf8("kept bytes"));
            id = env.snapshot();
        }
        try {
            assertTrue(fixture.emulator.snapshotExists(id), "snapshot " + id + " went with the sandbox it was taken of");
            try (Environment from = open(fixture.settings().with(VercelSettings.SNAPSHOT, id))) {
                assertEquals("kept bytes", from.exec(ExecRequest.builder("cat /tmp/kept").timeout(Duration.ofSeconds(30)).build())
                        .stdout().text());
            }
        } finally {
            try (VercelApi api = new VercelApi(VercelSettings.from(fixture.settings(), Map.of()), fixture.settings())) {
                api.deleteSnapshot(id);
            }
        }
        assertFalse(fixture.emulator.snapshotExists(id));
    }

    @Test
    void theEmulatorRefusesAsTheServiceDoes() throws Exception {
        assertError(send("GET", "/v2/sandboxes/snapshots/snap_unknown", null), 404, "not_found");
        assertError(send("DELETE", "/v2/sandboxes/snapshots/snap_unknown", null), 404, "not_found");
        assertError(send("POST", "/v3/sandboxes", "{\"projectId\":\"prj_s\",\"source\":{\"type\":\"snapshot\",\"snapshotId\":"
                + "\"snap_unknown\"}}"), 410, "snapshot_not_found");

        JsonNode made = ok(send("POST", "/v3/sandboxes", "{\"projectId\":\"prj_s\"}"));
        String sid = made.path("session").path("id").asText();
        String name = made.path("sandbox").path("name").asText();
        assertError(send("POST", "/v2/sandboxes/sessions/" + sid + "/snapshot", "{\"expiration\":-1}"), 400, "bad_request");
        JsonNode taken = ok(send("POST", "/v2/sandboxes/sessions/" + sid + "/snapshot", "{}"));
        String snap = taken.path("snapshot").path("id").asText();
        assertEquals("created", taken.path("snapshot").path("status").asText(), taken.toString());
        assertEquals("stopped", taken.path("session").path("status").asText(), "a snapshot stops the session, as the SDK documents");
        assertEquals(snap, ok(send("GET", "/v2/sandboxes/" + name, null)).path("sandbox").path("currentSnapshotId").asText());
        assertError(send("POST", "/v2/sandboxes/sessions/" + sid + "/snapshot", "{}"), 410, "sandbox_stopped");

        assertEquals("deleted", ok(send("DELETE", "/v2/sandboxes/snapshots/" + snap, null)).path("snapshot").path("status").asText());
        assertError(send("POST", "/v3/sandboxes", "{\"projectId\":\"prj_s\",\"source\":{\"type\":\"snapshot\",\"snapshotId\":\""
                + snap + "\"}}"), 410, "snapshot_not_found");
        assertError(send("PATCH", "/v2/sandboxes/" + name, "{\"currentSnapshotId\":\"" + snap + "\"}"), 410, "snapshot_not_found");
        ok(send("DELETE", "/v2/sandboxes/" + name, null));
    }

    private static JsonNode ok(HttpResponse<String> r) throws Exception {
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body());
    }

    private static void assertError(HttpResponse<String> r, int status, String code) throws Exception {
        assertEquals(status, r.statusCode(), r.body());
        assertEquals(code, JSON.readTree(r.body()).path("error").path("code").asText(), r.body());
    }

    private static HttpResponse<String> send(String method, String path, String json) throws Exception {
        URI u = URI.create(fixture.emulator.url() + path + "?teamId=" + VercelEmulatorFixture.TEAM + "&projectId=prj_s");
        HttpRequest.Builder b = HttpRequest.newBuilder(u).header("Authorization", "Bearer " + VercelEmulatorFixture.TOKEN)
                .timeout(Duration.ofSeconds(60));
        b = json == null ? b.method(method, HttpRequest.BodyPublishers.noBody())
                : b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json));
        return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
