package dev.airlock.vercel;

import com.sun.net.httpserver.HttpServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** A 429 that gives only {@code X-RateLimit-Reset} (epoch seconds) reads as the Retry-After it means. */
class ResetAsRetryAfterTest {
    static final long NOW = 1_800_000_000_000L;

    @Test
    void theResetIsSecondsFromNowRoundedUp() {
        assertEquals(42, ResetAsRetryAfter.secondsUntil(String.valueOf(NOW / 1000 + 42), NOW));
        assertEquals(1, ResetAsRetryAfter.secondsUntil(String.valueOf(NOW + 400), NOW), "epoch milliseconds too");
        assertEquals(0, ResetAsRetryAfter.secondsUntil(String.valueOf(NOW / 1000 - 5), NOW), "a reset in the past: now");
        assertEquals(-1, ResetAsRetryAfter.secondsUntil("soon", NOW));
        assertEquals(-1, ResetAsRetryAfter.secondsUntil(null, NOW));
    }

    @Test
    void onlyA429WithoutRetryAfterGetsOne() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", ex -> {
            String p = ex.getRequestURI().getPath();
            ex.getResponseHeaders().add("X-RateLimit-Reset", String.valueOf(NOW / 1000 + 7));
            if (p.equals("/both")) {
                ex.getResponseHeaders().add("Retry-After", "3");
            }
            ex.sendResponseHeaders(p.equals("/ok") ? 200 : 429, -1);
            ex.close();
        });
        server.start();
        OkHttpClient client = new OkHttpClient.Builder().addInterceptor(new ResetAsRetryAfter(() -> NOW)).build();
        String base = "http://127.0.0.1:" + server.getAddress().getPort();
        try {
            try (Response r = client.newCall(new Request.Builder().url(base + "/reset-only").build()).execute()) {
                assertEquals("7", r.header("Retry-After"));
            }
            try (Response r = client.newCall(new Request.Builder().url(base + "/both").build()).execute()) {
                assertEquals("3", r.header("Retry-After"), "the service's own Retry-After stands");
            }
            try (Response r = client.newCall(new Request.Builder().url(base + "/ok").build()).execute()) {
                assertNull(r.header("Retry-After"));
            }
        } finally {
            server.stop(0);
            client.dispatcher().executorService().shutdown();
            client.connectionPool().evictAll();
        }
    }

    /**
     * The client as wired: a create refused 429 with only {@code X-RateLimit-Reset} (the window's
     * end in epoch seconds, a second or two away) is waited out and sent again.
     */
    @Test
    void aCreateRefusedWithOnlyAResetIsWaitedOutAndSentAgain() throws Exception {
        java.util.concurrent.atomic.AtomicInteger creates = new java.util.concurrent.atomic.AtomicInteger();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", ex -> {
            ex.getRequestBody().readAllBytes();
            byte[] body;
            if (creates.incrementAndGet() == 1) {
                ex.getResponseHeaders().add("X-RateLimit-Reset", String.valueOf(System.currentTimeMillis() / 1000 + 1));
                body = "{\"error\":{\"code\":\"rate_limited\",\"message\":\"Rate limit exceeded\"}}".getBytes();
                ex.sendResponseHeaders(429, body.length);
            } else {
                body = ("{\"sandbox\":{\"name\":\"sbx-1\",\"createdAt\":1},\"session\":{\"id\":\"sess-1\",\"status\":\"running\"},"
                        + "\"routes\":[]}").getBytes();
                ex.sendResponseHeaders(200, body.length);
            }
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.start();
        dev.airlock.settings.Settings s = dev.airlock.settings.Settings.of("airlock.vercel.api-url",
                "http://127.0.0.1:" + server.getAddress().getPort(), "airlock.vercel.token", "reset-test-token",
                "airlock.vercel.project-id", "prj_reset", "airlock.vercel.team-id", "team_reset");
        try (VercelApi api = new VercelApi(VercelSettings.from(s, java.util.Map.of()), s)) {
            assertEquals("sess-1", api.create(java.util.Map.of()).sessionId());
            assertEquals(2, creates.get(), "refused once, then sent again");
        } finally {
            server.stop(0);
        }
    }
}
