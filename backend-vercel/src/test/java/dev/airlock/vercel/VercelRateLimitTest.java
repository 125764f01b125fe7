package dev.airlock.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.AirlockException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Vercel Sandbox's vCPU allocation rate (Pro: 400 vCPUs per minute), made small by the emulator's
 * setting: a create over it is refused 429 {@code rate_limited} with {@code Retry-After} and
 * {@code X-RateLimit-*}, and nothing is made; the client waits a short wait out and creates, and
 * says a long one, or one refusal too many, in one line.
 */
class VercelRateLimitTest {
    static final HttpClient HTTP = HttpClient.newHttpClient();
    VercelEmulatorFixture fixture;

    private VercelEmulatorFixture start(String faults, String allocation) {
        fixture = new VercelEmulatorFixture(faults.isEmpty() ? FaultPlan.none() : FaultPlan.parse(faults, 1),
                allocation == null ? Settings.empty() : Settings.of("airlock.vercel.emulator.rate-limit.vcpu-allocation", allocation));
        return fixture;
    }

    @AfterEach
    void stop() {
        if (fixture != null) {
            fixture.close();
        }
    }

    @Test
    void aCreateOverTheVcpuRateIs429RateLimitedWithItsHeaders() throws Exception {
        start("", "4/600");
        long before = System.currentTimeMillis() / 1000;
        HttpResponse<String> first = create(2);
        assertEquals(200, first.statusCode(), first.body());
        assertEquals("4", header(first, "X-RateLimit-Limit"));
        assertEquals("2", header(first, "X-RateLimit-Remaining"));
        long reset = Long.parseLong(header(first, "X-RateLimit-Reset"));
        assertTrue(reset > before + 590 && reset <= before + 602, "X-RateLimit-Reset is the window's end in epoch seconds: " + reset);
        HttpResponse<String> second = create(2);
        assertEquals(200, second.statusCode(), second.body());
        assertEquals("0", header(second, "X-RateLimit-Remaining"));
        int made = fixture.emulator.sandboxNames().size();

        HttpResponse<String> third = create(1);
        assertEquals(429, third.statusCode(), third.body());
        long wait = Long.parseLong(header(third, "Retry-After"));
        assertTrue(wait > 590 && wait <= 600, "Retry-After: " + wait);
        assertEquals("0", header(third, "X-RateLimit-Remaining"));
        JsonNode error = new ObjectMapper().readTree(third.body()).path("error");
        assertEquals("rate_limited", error.path("code").asText(), third.body());
        assertEquals("Rate limit exceeded: the vCPU allocation rate is 4 vCPUs per 600 s, 0 left for 1 asked; try again in "
                + wait + " s", error.path("message").asText(), third.body());
        assertEquals(4, error.path("limit").path("total").asInt(), third.body());
        assertEquals(0, error.path("limit").path("remaining").asInt(), third.body());
        assertEquals(reset, error.path("limit").path("reset").asLong(), third.body());
        assertEquals(made, fixture.emulator.sandboxNames().size(), "nothing made over the rate");
    }

    @Test
    void theDefaultIsTheProPlans400VcpusPerMinute() throws Exception {
        start("", null);
        HttpResponse<String> r = create(8);
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("400", header(r, "X-RateLimit-Limit"));
        assertEquals("392", header(r, "X-RateLimit-Remaining"));
    }

    /** The refusal made nothing, so the client sends the create again once the service's wait is over. */
    @Test
    void theClientWaitsOutAShortRetryAfterAndCreates() throws Exception {
        start("sandbox-create:status=429+1s@nth=1", null);
        try (Environment env = new VercelProvider().open(OpenContext.of(fixture.settings()))) {
            assertEquals(0, env.exec(ExecRequest.of("true")).exitCode());
            assertEquals(1, fixture.emulator.sandboxNames().size(), "one sandbox made");
        }
        assertEquals(2, fixture.journal.entries("sandbox-create").size(), "the refused create, then the one that made it");
    }

    @Test
    void aWaitLongerThanTheClientWaitsIsOneLineAndNothingIsResent() throws Exception {
        start("", "2/600");
        assertEquals(200, create(2).statusCode());
        BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                () -> new VercelProvider().open(OpenContext.of(fixture.settings())).close());
        assertTrue(e.getMessage().matches("Vercel refused to create a sandbox: rate limited \\(rate_limited: Rate limit exceeded:"
                + " the vCPU allocation rate is 2 vCPUs per 600 s, 0 left for 2 asked; try again in (\\d+) s\\);"
                + " it resets in (5\\d\\d|600) s, longer than the 60 s this client waits \\(airlock.vercel.retry.retry-after-max\\);"
                + " try again then, or create fewer sandboxes at once or with fewer vCPUs \\(airlock.vercel.vcpus\\)"), e.getMessage());
        assertEquals(2, fixture.journal.entries("sandbox-create").size(), "the refused create was not sent again");
        assertEquals(1, fixture.emulator.sandboxNames().size(), "nothing made over the rate");
    }

    @Test
    void whenTheRetriesRunOutItSaysSoInOneLine() {
        start("sandbox-create:status=429+1s@always", null);
        Settings s = fixture.settings().with("airlock.vercel.retry.max-attempts", "2");
        BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                () -> new VercelProvider().open(OpenContext.of(s)).close());
        assertEquals("Vercel refused to create a sandbox: rate limited (emulated_fault: emulated 429 for sandbox-create),"
                + " 2 times in a row; it resets in 1 s; try again then, or create fewer sandboxes at once or with fewer vCPUs"
                + " (airlock.vercel.vcpus)", e.getMessage());
        assertEquals(2, fixture.journal.entries("sandbox-create").size(), "sent twice, as max-attempts allows");
        assertTrue(fixture.emulator.sandboxNames().isEmpty(), "nothing made");
    }

    /**
     * Another call, one that may be retried (here the attach's look-up of the sandbox), told to
     * wait longer than the client waits says so in one line and is not sent again.
     */
    @Test
    void aCallThatMayBeRetriedSaysALongWaitInOneLine() throws Exception {
        start("sandbox-get:status=429+120s@always", null);
        HttpResponse<String> made = create(2);
        assertEquals(200, made.statusCode(), made.body());
        String name = new ObjectMapper().readTree(made.body()).path("sandbox").path("name").asText();
        AirlockException e = assertThrows(AirlockException.class, () -> new VercelProvider().open(
                OpenContext.of(fixture.settings().with("airlock.vercel.sandbox-id", name))).close());
        assertEquals("Vercel rate limited get the sandbox (429); it asks to wait 120 s; try again later or lower the concurrency",
                e.getMessage());
        assertEquals(1, fixture.journal.entries("sandbox-get").size(), "not sent again: the wait is over retry-after-max");
    }

    /** A create that failed otherwise (a 5xx: it may have made a sandbox) is still never sent again. */
    @Test
    void anotherFailureOfACreateIsNotResent() {
        start("sandbox-create:status=503", null);
        AirlockException e = assertThrows(AirlockException.class,
                () -> new VercelProvider().open(OpenContext.of(fixture.settings())).close());
        assertEquals(1, fixture.journal.entries("sandbox-create").size(), e.getMessage());
    }

    @Test
    void theMessageHasNoToken() {
        start("", "2/600");
        BackendUnavailableException e = assertThrows(BackendUnavailableException.class, () -> {
            assertEquals(200, create(2).statusCode());
            new VercelProvider().open(OpenContext.of(fixture.settings())).close();
        });
        assertTrue(!e.getMessage().contains(VercelEmulatorFixture.TOKEN), e.getMessage());
    }

    private HttpResponse<String> create(int vcpus) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(URI.create(fixture.emulator.url() + "/v3/sandboxes?teamId=" + VercelEmulatorFixture.TEAM))
                .header("Authorization", "Bearer " + VercelEmulatorFixture.TOKEN).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"projectId\":\"prj_rate\",\"resources\":{\"vcpus\":" + vcpus + "}}"))
                .build();
        return HTTP.send(r, HttpResponse.BodyHandlers.ofString());
    }

    private static String header(HttpResponse<String> r, String name) {
        return r.headers().firstValue(name).orElseThrow(() -> new AssertionError("no " + name + " in " + r.headers().map()));
    }
}
