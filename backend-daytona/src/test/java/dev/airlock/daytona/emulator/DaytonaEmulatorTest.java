package dev.airlock.daytona.emulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.remote.HttpClients;
import dev.airlock.remote.HttpSettings;
import dev.airlock.settings.Settings;
import okhttp3.MediaType;
import okhttp3.MultipartBody;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The emulator speaks Daytona's shapes and keeps its traps: tested over real HTTP on loopback. */
class DaytonaEmulatorTest {
    private static final MediaType JSON = MediaType.get("application/json");
    private final ObjectMapper json = new ObjectMapper();
    private final OkHttpClient http = HttpClients.create(HttpSettings.defaults());

    @TempDir
    java.nio.file.Path state;
    DaytonaEmulator emulator;
    CallJournal journal;

    void start(String faults) throws IOException {
        journal = new CallJournal();
        emulator = new DaytonaEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0), state,
                SandboxIsolation.detect(Settings.empty()), FaultPlan.parse(faults, 1), journal, Settings.empty(),
                java.util.Map.of(DaytonaEmulator.API_KEY_VARIABLE, "test-key")));
    }

    @AfterEach
    void stop() {
        if (emulator != null) {
            emulator.close();
        }
        HttpClients.close(http);
    }

    private Response call(String method, String url, RequestBody body) throws IOException {
        if (body == null && method.equals("POST")) {
            body = RequestBody.create(new byte[0]);
        }
        return http.newCall(new Request.Builder().url(url).method(method, body)
                .header("Authorization", "Bearer test-key").build()).execute();
    }

    private JsonNode ok(Response r) throws IOException {
        try (r) {
            String text = r.body().string();
            assertTrue(r.isSuccessful(), r.code() + " " + text);
            return text.isEmpty() ? null : json.readTree(text);
        }
    }

    private String create(String body) throws IOException {
        return ok(call("POST", emulator.url() + "/sandbox", RequestBody.create(body, JSON))).get("id").asText();
    }

    private String toolbox(String id) {
        return emulator.url().toString().replace("/api", "/toolbox/") + id;
    }

    private JsonNode execute(String id, String command) throws IOException {
        return ok(call("POST", toolbox(id) + "/process/execute", RequestBody.create(
                json.createObjectNode().put("command", command).put("timeout", 30).toString(), JSON)));
    }

    @Test
    void aSnapshotIsTakenOfARunningSandboxDeletedByIdAndItsNameIsUnique() throws Exception {
        start("");
        String id = create("{}");
        execute(id, "printf kept > /home/daytona/f");
        String body = "{\"name\":\"snap-one\"}";
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        emulator.holdSnapshots(gate);
        assertEquals("snapshotting", ok(call("POST", emulator.url() + "/sandbox/" + id + "/snapshot", RequestBody.create(body, JSON)))
                .get("state").asText());
        try (Response busy = call("POST", emulator.url() + "/sandbox/" + id + "/snapshot", RequestBody.create("{\"name\":\"x\"}", JSON))) {
            assertEquals(400, busy.code(), "a snapshot of a sandbox that is snapshotting");
        }
        try (Response toolboxBusy = call("POST", toolbox(id) + "/process/execute", RequestBody.create(
                json.createObjectNode().put("command", "true").put("timeout", 30).toString(), JSON))) {
            assertEquals(409, toolboxBusy.code(), "the toolbox of a sandbox that is snapshotting");
        }
        gate.countDown();
        JsonNode snap = null;
        for (int i = 0; i < 200; i++) {
            snap = ok(call("GET", emulator.url() + "/snapshots/snap-one", null));
            if (snap.get("state").asText().equals("active")) {
                break;
            }
            Thread.sleep(50);
        }
        assertEquals("active", snap.get("state").asText());
        assertEquals(id, snap.get("sourceSandboxId").asText());
        assertEquals("started", ok(call("GET", emulator.url() + "/sandbox/" + id, null)).get("state").asText());
        try (Response again = call("POST", emulator.url() + "/sandbox/" + id + "/snapshot", RequestBody.create(body, JSON))) {
            assertEquals(409, again.code(), "a second snapshot of the same name");
        }
        String copy = create("{\"snapshot\":\"snap-one\"}");
        assertEquals("kept", execute(copy, "cat /home/daytona/f").get("result").asText());
        try (Response byName = call("DELETE", emulator.url() + "/snapshots/snap-one", null)) {
            assertEquals(404, byName.code(), "the service deletes a snapshot by its id");
        }
        ok(call("DELETE", emulator.url() + "/snapshots/" + snap.get("id").asText(), null));
        try (Response gone = call("GET", emulator.url() + "/snapshots/snap-one", null)) {
            assertEquals(404, gone.code());
        }
    }

    @Test
    void createThenPollReportsStartedWithAToolboxUrlAndDeleteThen404() throws IOException {
        start("");
        JsonNode created = ok(call("POST", emulator.url() + "/sandbox",
                RequestBody.create("{\"snapshot\":\"daytonaio/sandbox:latest\",\"labels\":{\"a\":\"1\"}}", JSON)));
        String id = created.get("id").asText();
        assertEquals("creating", created.get("state").asText());
        JsonNode got = ok(call("GET", emulator.url() + "/sandbox/" + id, null));
        assertEquals("started", got.get("state").asText());
        assertTrue(got.get("toolboxProxyUrl").asText().endsWith("/toolbox"));
        assertEquals("1", ok(call("GET", emulator.url() + "/sandbox?labels=%7B%22a%22%3A%221%22%7D", null)).get(0)
                .get("labels").get("a").asText());
        assertEquals("destroying", ok(call("DELETE", emulator.url() + "/sandbox/" + id, null)).get("state").asText());
        try (Response r = call("DELETE", emulator.url() + "/sandbox/" + id, null)) {
            assertEquals(404, r.code());
            JsonNode e = json.readTree(r.body().string());
            assertEquals(404, e.get("statusCode").asInt());
            assertEquals("Not Found", e.get("error").asText());
            assertTrue(e.get("message").asText().contains(id));
            assertTrue(e.has("timestamp") && e.has("path"));
        }
    }

    @Test
    void resourcesWithASnapshotAre400AndAFailingBuildSaysWhy() throws IOException {
        start("");
        try (Response r = call("POST", emulator.url() + "/sandbox", RequestBody.create("{\"snapshot\":\"s\",\"cpu\":2}", JSON))) {
            assertEquals(400, r.code());
        }
        String id = create("{\"snapshot\":\"" + DaytonaEmulator.FAILING_SNAPSHOT + "\"}");
        JsonNode got = ok(call("GET", emulator.url() + "/sandbox/" + id, null));
        assertEquals("build_failed", got.get("state").asText());
        assertFalse(got.get("errorReason").asText().isEmpty());
    }

    /** A snapshot the service has not got is refused 400 with its words; an image no registry has fails its build. */
    @Test
    void unknownSnapshotsAndImagesFailAsOnTheService() throws IOException {
        start("");
        try (Response r = call("POST", emulator.url() + "/sandbox", RequestBody.create("{\"snapshot\":\"no-such-snapshot-zzz\"}", JSON))) {
            assertEquals(400, r.code());
            assertEquals("Snapshot no-such-snapshot-zzz not found. Did you add it through the Daytona Dashboard?",
                    json.readTree(r.body().string()).get("message").asText());
        }
        assertTrue(emulator.sandboxIds().isEmpty());
        String id = create("{\"buildInfo\":{\"dockerfileContent\":\"FROM no-such-image-zzz:404\"}}");
        JsonNode got = ok(call("GET", emulator.url() + "/sandbox/" + id, null));
        assertEquals("build_failed", got.get("state").asText());
        assertTrue(got.get("errorReason").asText().contains("no-such-image-zzz:404"), got.toString());
    }

    @Test
    void executePipesTheCommandIntoAShellSoLeftoverStdinRuns() throws IOException {
        start("");
        String id = create("{}");
        ok(call("POST", toolbox(id) + "/files/upload-v2?path=/tmp/in", RequestBody.create("read x\ntouch /tmp/pwned\n",
                MediaType.get("application/octet-stream"))));
        // The trap the client must avoid: after `exec 0< f`, the shell reads the rest of f as commands.
        execute(id, "exec 0< /tmp/in\nread line");
        assertTrue(emulator.stat(id, "/tmp/pwned").isPresent(), "the emulator must reproduce the daemon's trap");
        emulator.stat(id, "/tmp/pwned");
        execute(id, "rm -f /tmp/pwned");
        execute(id, "sh -c 'exec 0< /tmp/in\nread line'");
        assertTrue(emulator.stat(id, "/tmp/pwned").isEmpty(), "wrapped in sh -c, the leftover is never run");
    }

    @Test
    void executeOutputIsTextNotBytesAndATimeoutIs408() throws IOException {
        start("");
        String id = create("{}");
        JsonNode r = execute(id, "printf 'a\\000b\\377'; exit 3");
        assertEquals(3, r.get("exitCode").asInt());
        assertEquals("ab\uFFFD", r.get("result").asText());
        try (Response t = call("POST", toolbox(id) + "/process/execute",
                RequestBody.create("{\"command\":\"sleep 30\",\"timeout\":1}", JSON))) {
            assertEquals(408, t.code());
            assertEquals("PROCESS_EXECUTION_TIMEOUT", json.readTree(t.body().string()).get("code").asText());
        }
    }

    @Test
    void sessionsRunCommandsAsyncAndDeletingOneKillsItsCommand() throws Exception {
        start("");
        String id = create("{}");
        String t = toolbox(id);
        try (Response r = call("POST", t + "/process/session", RequestBody.create("{\"sessionId\":\"s1\"}", JSON))) {
            assertEquals(201, r.code());
        }
        try (Response r = call("POST", t + "/process/session", RequestBody.create("{\"sessionId\":\"s1\"}", JSON))) {
            assertEquals(409, r.code());
        }
        String cmd = ok(call("POST", t + "/process/session/s1/exec",
                RequestBody.create("{\"command\":\"echo out; echo err >&2; exit 4\",\"runAsync\":true}", JSON))).get("cmdId").asText();
        JsonNode c;
        do {
            Thread.sleep(20);
            c = ok(call("GET", t + "/process/session/s1/command/" + cmd, null));
        } while (!c.has("exitCode"));
        assertEquals(4, c.get("exitCode").asInt());
        JsonNode logs = ok(call("GET", t + "/process/session/s1/command/" + cmd + "/logs", null));
        assertEquals("out\n", logs.get("stdout").asText());
        assertEquals("err\n", logs.get("stderr").asText());
        assertEquals(1, ok(call("GET", t + "/process/session/s1", null)).get("commands").size());

        int s1 = emulator.liveProcesses(); // the session's shell, waiting for its next command
        assertTrue(s1 > 0);
        ok(call("POST", t + "/process/session", RequestBody.create("{\"sessionId\":\"s2\"}", JSON)));
        ok(call("POST", t + "/process/session/s2/exec", RequestBody.create("{\"command\":\"sleep 300\",\"runAsync\":true}", JSON)));
        assertTrue(emulator.liveProcesses() > s1);
        try (Response r = call("DELETE", t + "/process/session/s2", null)) {
            assertEquals(204, r.code());
        }
        assertEquals(s1, emulator.liveProcesses());
        try (Response r = call("DELETE", t + "/process/session/s1", null)) {
            assertEquals(204, r.code());
        }
        assertEquals(0, emulator.liveProcesses());
    }

    @Test
    void filesKeepBytesAndModesAndBulkUploadNeedsThePathFirst() throws IOException {
        start("");
        String id = create("{}");
        String t = toolbox(id);
        byte[] data = {0, 1, (byte) 0xff, '\n', 0};
        ok(call("POST", t + "/files/folder?path=/tmp/d&mode=0700", null));
        ok(call("POST", t + "/files/bulk-upload", new MultipartBody.Builder().setType(MultipartBody.FORM)
                .addFormDataPart("files[0].path", "/tmp/d/f")
                .addFormDataPart("files[0].file", "f", RequestBody.create(data)).build()));
        assertEquals("rw-r--r--", PosixFilePermissions.toString(emulator.stat(id, "/tmp/d/f").get().permissions()));
        assertEquals("rwx------", PosixFilePermissions.toString(emulator.stat(id, "/tmp/d").get().permissions()));
        ok(call("POST", t + "/files/permissions?path=/tmp/d/f&mode=0600", null));
        assertEquals("rw-------", PosixFilePermissions.toString(emulator.stat(id, "/tmp/d/f").get().permissions()));
        assertEquals(java.util.List.of("/tmp/d/f 600"), emulator.chmods());
        try (Response r = call("GET", t + "/files/download?path=/tmp/d/f", null)) {
            assertArrayEquals(data, r.body().bytes());
        }
        try (Response r = call("POST", t + "/files/bulk-upload", new MultipartBody.Builder().setType(MultipartBody.FORM)
                .addFormDataPart("files[0].file", "f", RequestBody.create(data))
                .addFormDataPart("files[0].path", "/tmp/d/g").build())) {
            assertEquals(400, r.code());
        }
        assertTrue(emulator.stat(id, "/tmp/d/g").isEmpty());
        try (Response r = call("DELETE", t + "/files?path=/tmp/d/f", null)) {
            assertEquals(204, r.code());
        }
        try (Response r = call("DELETE", t + "/files?path=/tmp/d/f", null)) {
            assertEquals(404, r.code());
            assertEquals("FILE_NOT_FOUND", json.readTree(r.body().string()).get("code").asText());
        }
    }

    @Test
    void faultsApplyToAnyCallWithRetryAfterPerBucketAndAreJournalled() throws IOException {
        start("sandbox-create:status=429+3s,process-execute:lose");
        try (Response r = call("POST", emulator.url() + "/sandbox", RequestBody.create("{}", JSON))) {
            assertEquals(429, r.code());
            assertEquals("3", r.header("Retry-After-sandbox-create"));
            assertEquals(429, json.readTree(r.body().string()).get("statusCode").asInt());
        }
        assertTrue(emulator.sandboxIds().isEmpty(), "a 429 does not do the work");
        String id = create("{}");
        assertThrows(IOException.class, () -> execute(id, "touch /tmp/ran"));
        assertTrue(emulator.stat(id, "/tmp/ran").isPresent(), "a lost answer: the work was done");
        assertEquals(1, journal.entries("process-execute").stream().filter(e -> e.dispatch()).count());
        try (Response r = http.newCall(new Request.Builder().url(emulator.url() + "/sandbox").build()).execute()) {
            assertEquals(401, r.code());
        }
        try (Response r = http.newCall(new Request.Builder().url(emulator.url() + "/socket.io/?EIO=4&transport=polling")
                .build()).execute()) {
            assertEquals(404, r.code());
        }
        Map<String, Integer> twice = journal.dispatchedTwice();
        assertTrue(twice.isEmpty(), twice.toString());
    }
}
