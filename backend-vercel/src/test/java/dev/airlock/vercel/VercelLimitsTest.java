package dev.airlock.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.AirlockException;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The plan's limits on a sandbox (Pro: at most 8 vCPUs and 24 hours, extensions included; at
 * most 15 ports, as the SDK documents), refused 400 {@code bad_request} in the service's error
 * shape before anything is made; the client shows it in one line.
 */
class VercelLimitsTest {
    static VercelEmulatorFixture fixture;

    @BeforeAll
    static void start() {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @Test
    void vcpusTimeoutPortsOverTheLimitAndUnknownRuntimesAreRefused() throws Exception {
        int made = fixture.emulator.sandboxNames().size(); // by the other tests of the class, in whatever order they run
        assertRefused("\"resources\":{\"vcpus\":999}", "resources.vcpus must be between 1 and 8, not 999");
        assertRefused("\"timeout\":2592000000", "timeout must be between 1 and 86400000 ms (24 hours), not 2592000000");
        StringBuilder ports = new StringBuilder();
        for (int p = 3000; p < 3016; p++) {
            ports.append(ports.length() == 0 ? "" : ",").append(p);
        }
        assertRefused("\"ports\":[" + ports + "]", "a sandbox exposes at most 15 ports, not 16");
        assertRefused("\"runtime\":\"cobol85\"", "runtime must be one of node22, node24, node26, python3.13, not cobol85");
        assertEquals(made, fixture.emulator.sandboxNames().size(), "nothing made over a limit");
    }

    @Test
    void extendingPast24HoursIsRefused() throws Exception {
        HttpResponse<String> made = post("/v3/sandboxes", "{\"projectId\":\"prj_limits\",\"timeout\":86000000}");
        assertEquals(200, made.statusCode(), made.body());
        String sid = new ObjectMapper().readTree(made.body()).path("session").path("id").asText();
        HttpResponse<String> r = post("/v2/sandboxes/sessions/" + sid + "/extend-timeout", "{\"duration\":1000000}");
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("the session's timeout would be 87000000 ms; the maximum is 86400000 ms (24 hours)",
                new ObjectMapper().readTree(r.body()).path("error").path("message").asText(), r.body());
        assertEquals(200, post("/v2/sandboxes/sessions/" + sid + "/stop", "{}").statusCode());
    }

    @Test
    void theClientSaysSoInOneLine() {
        AirlockException e = assertThrows(AirlockException.class, () -> new VercelProvider().open(
                OpenContext.of(fixture.settings().with("airlock.vercel.vcpus", "999"))).close());
        assertEquals("Vercel refused create a sandbox (400) (bad_request: resources.vcpus must be between 1 and 8, not 999)",
                e.getMessage());
    }

    private static void assertRefused(String fields, String message) throws Exception {
        HttpResponse<String> r = post("/v3/sandboxes", "{\"projectId\":\"prj_limits\"," + fields + "}");
        assertEquals(400, r.statusCode(), r.body());
        JsonNode error = new ObjectMapper().readTree(r.body()).path("error");
        assertEquals("bad_request", error.path("code").asText(), r.body());
        assertEquals(message, error.path("message").asText(), r.body());
    }

    private static HttpResponse<String> post(String path, String json) throws Exception {
        URI u = URI.create(fixture.emulator.url() + path + "?teamId=" + VercelEmulatorFixture.TEAM);
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(u).header("Authorization", "Bearer " + VercelEmulatorFixture.TOKEN)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
