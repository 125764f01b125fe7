package dev.airlock.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.spi.Deadline;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ports on Daytona: each a signed preview URL (no header needed), revoked when the port closes,
 * refused past its expiry; the standard preview URL refused by the emulator's proxy without its
 * token; the preview-link call ended by its deadline when the service stalls; bad ports and a bad
 * expiry refused in one line.
 */
class DaytonaPortsTest {
    private static final byte[] PAGE = "served from the sandbox \u00e9\n".getBytes(StandardCharsets.UTF_8);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path state;

    /** A busybox httpd on {@code port} serving {@link #PAGE} as /index.html. */
    private static void serve(Environment env, int port) {
        String dir = "/home/daytona/www-" + port;
        env.files().write(dir + "/index.html", PAGE);
        env.start(ExecRequest.of("exec busybox httpd -f -p " + port + " -h " + dir));
    }

    /** GET /index.html, with the preview token header when {@code token} is not null: its status. */
    private static HttpResponse<byte[]> get(URI url, String token) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(url.resolve("/index.html")).timeout(Duration.ofSeconds(10)).GET();
        if (token != null) {
            b.header("x-daytona-preview-token", token);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** The page through {@code url} once the server answers (it is starting), with the token header if given. */
    private static byte[] page(URI url, String token) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        String last = "nothing";
        while (System.nanoTime() < end) {
            try {
                HttpResponse<byte[]> r = get(url, token);
                if (r.statusCode() == 200) {
                    return r.body();
                }
                last = "HTTP " + r.statusCode();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(100);
        }
        throw new AssertionError(url + " did not serve the page: " + last);
    }

    @Test
    void theStandardPreviewUrlIsRefusedWithoutItsTokenAndAnswersWithIt() throws Exception {
        try (DaytonaEmulatorFixture f = new DaytonaEmulatorFixture(state, FaultPlan.none());
             Environment env = f.open(f.settings())) {
            serve(env, 3000);
            String id = DaytonaBackend.of(env).sandboxId();
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(f.emulator.url() + "/sandbox/" + id
                    + "/ports/3000/preview-url")).header("Authorization", "Bearer " + DaytonaEmulatorFixture.KEY).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            JsonNode link = new ObjectMapper().readTree(r.body());
            URI url = URI.create(link.path("url").asText());
            String token = link.path("token").asText();
            assertArrayEquals(PAGE, page(url, token), "the standard preview URL with its token must serve the page");
            assertEquals(401, get(url, null).statusCode(), "the standard preview URL answered without its token");
            assertEquals(401, get(url, token + "x").statusCode(), "the standard preview URL answered a wrong token");
            assertFalse(new String(get(url, null).body(), StandardCharsets.UTF_8).contains(token), "the refusal shows the token");
        }
    }

    @Test
    void aPortIsASignedUrlThatNeedsNoHeaderAndClosingThePortRevokesIt() throws Exception {
        try (DaytonaEmulatorFixture f = new DaytonaEmulatorFixture(state, FaultPlan.none());
             Environment env = f.open(f.settings())) {
            serve(env, 3000);
            URI url = env.ports().expose(3000);
            assertArrayEquals(PAGE, page(url, null), "the port's URL must serve the page with no header");
            env.ports().close(3000);
            assertEquals(401, get(url, null).statusCode(), "a closed port's signed URL still answers");
            URI again = env.ports().expose(3000);
            assertArrayEquals(PAGE, page(again, null), "the port exposed again must serve the page");
        }
    }

    @Test
    void aSignedUrlIsRefusedPastItsExpiry() throws Exception {
        try (DaytonaEmulatorFixture f = new DaytonaEmulatorFixture(state, FaultPlan.none());
             Environment env = f.open(f.settings(DaytonaSettings.PREVIEW_EXPIRY, "2s"))) {
            serve(env, 3000);
            URI url = env.ports().expose(3000);
            assertArrayEquals(PAGE, page(url, null));
            long end = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            while (get(url, null).statusCode() == 200 && System.nanoTime() < end) {
                Thread.sleep(200);
            }
            assertEquals(401, get(url, null).statusCode(), "a signed URL answered past its expiry (2s)");
        }
    }

    @Test
    void aStalledPreviewLinkCallEndsByItsDeadline() throws Exception {
        FaultPlan stall = FaultPlan.parse("signed-preview-url:delay=120s@always", 1);
        try (DaytonaEmulatorFixture f = new DaytonaEmulatorFixture(state, stall);
             Environment env = f.open(f.settings())) {
            long t0 = System.nanoTime();
            IOException e = assertThrows(IOException.class,
                    () -> DaytonaBackend.of(env).portForwarder().orElseThrow().open(3000, Deadline.in(Duration.ofSeconds(2))));
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            assertTrue(took.compareTo(Duration.ofSeconds(20)) < 0, "a stalled preview-link call took " + took + " (deadline 2 s)");
            assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
            assertFalse(e.getMessage().contains(DaytonaEmulatorFixture.KEY), e.getMessage());
        }
    }

    @Test
    void aPortOutsideTheServicesRangeIsRefusedInOneLine() throws Exception {
        try (DaytonaEmulatorFixture f = new DaytonaEmulatorFixture(state, FaultPlan.none());
             Environment env = f.open(f.settings())) {
            for (int bad : new int[] {0, 65536, 70000}) {
                ConfigurationException e = assertThrows(ConfigurationException.class, () -> env.ports().expose(bad));
                assertTrue(e.getMessage().contains(String.valueOf(bad)) && !e.getMessage().contains("\n"), e.getMessage());
            }
            // The emulator refuses it too, as the service's validation does.
            String id = DaytonaBackend.of(env).sandboxId();
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(f.emulator.url() + "/sandbox/" + id
                    + "/ports/70000/signed-preview-url")).header("Authorization", "Bearer " + DaytonaEmulatorFixture.KEY).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(400, r.statusCode(), r.body());
            assertTrue(r.body().contains("Invalid port: 70000"), r.body());
        }
    }

    @Test
    void aPreviewExpiryUnderASecondIsRefusedInOneLine() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> DaytonaSettings.from(
                dev.airlock.settings.Settings.of(DaytonaSettings.API_KEY, "k", DaytonaSettings.PREVIEW_EXPIRY, "0s"), java.util.Map.of()));
        assertTrue(e.getMessage().contains(DaytonaSettings.PREVIEW_EXPIRY) && !e.getMessage().contains("\n"), e.getMessage());
    }
}
