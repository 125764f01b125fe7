package dev.airlock.emulator;

import dev.airlock.settings.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The journal catches clients that leak a value into a command, or dispatch one twice. */
class CallJournalTest {
    static final String API_KEY = "sk-live-7d3e9a1f0c";
    static final String PAYLOAD = "payload-\u00e9\u00ff-odd bytes 1234";

    @TempDir
    Path state;
    Emulators.Served served;
    String sandbox;
    final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void start() throws Exception {
        served = Emulators.start("reference", "127.0.0.1:0", Settings.of("airlock.emulator.state-dir", state.toString()),
                getClass().getClassLoader());
        String created = send(HttpRequest.newBuilder(url("/sandboxes")).POST(HttpRequest.BodyPublishers.noBody()));
        sandbox = created.replaceAll(".*\"id\":\"([^\"]+)\".*", "$1");
    }

    @AfterEach
    void stop() {
        served.close();
    }

    URI url(String path) {
        return URI.create(served.emulator().url() + path);
    }

    String send(HttpRequest.Builder b) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(b.header("Authorization", "Bearer t").build(), HttpResponse.BodyHandlers.ofString());
        assertTrue(r.statusCode() < 300, r.statusCode() + " " + r.body());
        return r.body();
    }

    /** The leaking client: env and stdin spliced into the command text. */
    void leakyExec(String execId) throws Exception {
        send(HttpRequest.newBuilder(url("/sandboxes/" + sandbox + "/exec")).header("X-Exec-Id", execId)
                .POST(HttpRequest.BodyPublishers.ofString("export API_KEY='" + API_KEY + "'; printf '%s' '" + PAYLOAD
                        + "' | wc -c")));
    }

    /** The careful client: env natively, the payload as a file, the command names neither. */
    void carefulExec(String execId) throws Exception {
        send(HttpRequest.newBuilder(url("/sandboxes/" + sandbox + "/files?path=/root/in&mode=0600"))
                .PUT(HttpRequest.BodyPublishers.ofString(PAYLOAD)));
        send(HttpRequest.newBuilder(url("/sandboxes/" + sandbox + "/exec")).header("X-Exec-Id", execId)
                .header("X-Env", "API_KEY=" + API_KEY)
                .POST(HttpRequest.BodyPublishers.ofString("wc -c < /root/in; test -n \"$API_KEY\"")));
    }

    @Test
    void aLeakingClientIsCaughtAndTheMessageHoldsNoValue() throws Exception {
        leakyExec("e-1");
        AssertionError env = assertThrows(AssertionError.class, () -> served.journal().assertNoneCarries(API_KEY));
        assertTrue(env.getMessage().contains("exec"), env.getMessage());
        assertFalse(env.getMessage().contains(API_KEY), "the journal must not leak what it caught");
        assertThrows(AssertionError.class, () -> served.journal().assertNoneCarries(PAYLOAD.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void aCarefulClientPasses() throws Exception {
        carefulExec("e-1");
        served.journal().assertNoneCarries(API_KEY);
        served.journal().assertNoneCarries(PAYLOAD.getBytes(StandardCharsets.UTF_8));
        served.journal().assertNoDoubleDispatch();
        CallJournal.Entry exec = served.journal().entries().stream().filter(CallJournal.Entry::dispatch).findFirst().orElseThrow();
        assertEquals(java.util.List.of("API_KEY"), exec.envNames(), "names only, never values");
        assertEquals(PAYLOAD.getBytes(StandardCharsets.UTF_8).length,
                served.journal().entries("file-write").get(0).requestBytes(), "sizes are recorded");
    }

    @Test
    void aClientThatResendsADispatchIsCaught() throws Exception {
        carefulExec("e-1");
        carefulExec("e-2");
        served.journal().assertNoDoubleDispatch();
        carefulExec("e-2"); // a retry of a dispatch, as the official SDKs do it
        AssertionError twice = assertThrows(AssertionError.class, () -> served.journal().assertNoDoubleDispatch());
        assertTrue(twice.getMessage().contains("e-2=2"), twice.getMessage());
    }
}
