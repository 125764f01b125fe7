package dev.airlock.remote;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import dev.airlock.DispatchOutcomeUnknownException;
import dev.airlock.EnvironmentClosedException;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The retry rule as a table: every call kind against every fault, on a real loopback server.
 * Expectations are written out per row (not derived from {@link RetryPolicy}), so breaking the
 * rule turns rows red. Waits are recorded by a sleeper, never served, so nothing here is timed.
 */
class RetryRulesTest {
    static final Service SERVICE = new Service("Acme", "ACME_TOKEN", "airlock.acme.url");
    static final int ATTEMPTS = 4;
    static final RetryPolicy POLICY = new RetryPolicy(ATTEMPTS, Duration.ofMillis(100), Duration.ofMillis(400),
            Duration.ofSeconds(60), 0.2, 1000, Duration.ofSeconds(30), 42, d -> { });

    /** How a fault should end, for idempotent calls and for a dispatch. */
    enum Fault {
        //                 idempotent: retried?, final exception         dispatch: final exception      Retry-After window (ms)
        RETRY_AFTER_SECONDS(true, BackendUnavailableException.class, BackendUnavailableException.class, 2000, 2400),
        RETRY_AFTER_DATE(true, BackendUnavailableException.class, BackendUnavailableException.class, 1000, 3600),
        RETRY_AFTER_BUCKET(true, BackendUnavailableException.class, BackendUnavailableException.class, 5000, 6000),
        RETRY_AFTER_TOO_LONG(false, BackendUnavailableException.class, BackendUnavailableException.class, -1, -1),
        UNAVAILABLE_503(true, BackendUnavailableException.class, DispatchOutcomeUnknownException.class, 0, 0),
        BAD_GATEWAY_502(true, BackendUnavailableException.class, DispatchOutcomeUnknownException.class, 0, 0),
        GATEWAY_TIMEOUT_504(true, BackendException.class, DispatchOutcomeUnknownException.class, 0, 0),
        INTERNAL_500(false, BackendUnavailableException.class, DispatchOutcomeUnknownException.class, -1, -1),
        UNAUTHORIZED_401(false, ConfigurationException.class, ConfigurationException.class, -1, -1),
        SANDBOX_GONE_404(false, EnvironmentClosedException.class, EnvironmentClosedException.class, -1, -1),
        BAD_REQUEST_400(false, BackendException.class, BackendException.class, -1, -1),
        ANSWER_LOST(true, BackendException.class, DispatchOutcomeUnknownException.class, 0, 0),
        NOT_SENT(true, BackendUnavailableException.class, BackendUnavailableException.class, 0, 0);

        final boolean retried;
        final Class<? extends AirlockException> idempotentEnd;
        final Class<? extends AirlockException> dispatchEnd;
        final long minWaitMs; // 0: backoff; -1: no wait at all
        final long maxWaitMs;

        Fault(boolean retried, Class<? extends AirlockException> idempotentEnd,
              Class<? extends AirlockException> dispatchEnd, long minWaitMs, long maxWaitMs) {
            this.retried = retried;
            this.idempotentEnd = idempotentEnd;
            this.dispatchEnd = dispatchEnd;
            this.minWaitMs = minWaitMs;
            this.maxWaitMs = maxWaitMs;
        }

        MockResponse response() {
            MockResponse.Builder b = new MockResponse.Builder();
            return switch (this) {
                case RETRY_AFTER_SECONDS -> b.code(429).addHeader("Retry-After", "2").body("{\"message\":\"slow down\"}").build();
                case RETRY_AFTER_DATE -> b.code(429).addHeader("Retry-After", DateTimeFormatter.RFC_1123_DATE_TIME
                        .format(ZonedDateTime.now(ZoneOffset.UTC).plusSeconds(3))).build();
                case RETRY_AFTER_BUCKET -> b.code(429).addHeader("Retry-After-sandbox-create", "5")
                        .addHeader("Retry-After-other", "50").build();
                case RETRY_AFTER_TOO_LONG -> b.code(429).addHeader("Retry-After", "3600").build();
                case UNAVAILABLE_503 -> b.code(503).build();
                case BAD_GATEWAY_502 -> b.code(502).body("<html>bad gateway</html>").build();
                case GATEWAY_TIMEOUT_504 -> b.code(504).build();
                case INTERNAL_500 -> b.code(500).body("{\"statusCode\":500,\"message\":\"boom\"}").build();
                case UNAUTHORIZED_401 -> b.code(401).body("{\"message\":\"bad token Bearer abcdefgh12345678\"}").build();
                case SANDBOX_GONE_404 -> b.code(404).body("{\"error\":{\"code\":\"not_found\",\"message\":\"no sandbox\"}}").build();
                case BAD_REQUEST_400 -> b.code(400).body("{\"message\":\"cpu must be a number\"}").build();
                case ANSWER_LOST -> b.onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build();
                case NOT_SENT -> throw new AssertionError("no response: nothing listens");
            };
        }
    }

    /** Kinds and how each is sent; DISPATCH_ASKING asks "did it run?" after a lost answer. */
    enum Kind { READ, STATUS, UPLOAD_PART, KEYED, DISPATCH, DISPATCH_ASKING }

    static MockWebServer server;
    static OkHttpClient client;
    static HttpUrl deadUrl;
    static volatile Fault current;
    static final AtomicInteger callHits = new AtomicInteger();

    @BeforeAll
    static void start() throws IOException {
        server = new MockWebServer();
        server.setDispatcher(new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                if (request.getUrl().encodedPath().equals("/status")) {
                    return new MockResponse.Builder().code(200).body("ran").build();
                }
                callHits.incrementAndGet();
                return current.response();
            }
        });
        server.start();
        client = HttpClients.create(HttpSettings.defaults());
        try (ServerSocket s = new ServerSocket(0)) {
            deadUrl = HttpUrl.get("http://127.0.0.1:" + s.getLocalPort() + "/call");
        }
    }

    @AfterAll
    static void stop() {
        server.close();
        HttpClients.close(client);
    }

    static Stream<Arguments> table() {
        List<Arguments> rows = new ArrayList<>();
        for (Kind k : Kind.values()) {
            for (Fault f : Fault.values()) {
                rows.add(Arguments.of(k, f));
            }
        }
        return rows.stream();
    }

    @ParameterizedTest(name = "{0} x {1}")
    @MethodSource("table")
    void everyKindAgainstEveryFault(Kind kind, Fault fault) {
        current = fault;
        callHits.set(0);
        List<Duration> waits = new ArrayList<>();
        RemoteCalls calls = new RemoteCalls(SERVICE, POLICY.withSleeper(waits::add));
        AtomicInteger attempts = new AtomicInteger();
        HttpUrl url = fault == Fault.NOT_SENT ? deadUrl : server.url("/call");
        Supplier<String> send = () -> {
            attempts.incrementAndGet();
            return Http.execute(client, request(kind, url), "sandbox-create", Redactor.of(), r -> r.body().string());
        };
        Supplier<Optional<String>> ask = () -> Optional.of(
                Http.execute(client, new Request.Builder().url(server.url("/status")).build(), "", Redactor.of(),
                        r -> r.body().string()));

        boolean dispatch = kind == Kind.DISPATCH || kind == Kind.DISPATCH_ASKING;
        if (kind == Kind.DISPATCH_ASKING && fault.dispatchEnd == DispatchOutcomeUnknownException.class) {
            // Outcome unknown, but the service can say whether it ran: its answer is the result.
            assertEquals("ran", calls.dispatch("exec", Resource.sandbox("sb-1"), send, ask));
        } else {
            AirlockException e = assertThrows(AirlockException.class, () -> {
                if (kind == Kind.DISPATCH) {
                    calls.dispatch("exec", Resource.sandbox("sb-1"), send);
                } else if (kind == Kind.DISPATCH_ASKING) {
                    calls.dispatch("exec", Resource.sandbox("sb-1"), send, ask);
                } else {
                    calls.call(CallKind.valueOf(kind.name()), "get", Resource.sandbox("sb-1"), send);
                }
            });
            assertEquals(dispatch ? fault.dispatchEnd : fault.idempotentEnd, e.getClass(), e.getMessage());
            assertEquals(1, e.getMessage().lines().count(), "one line: " + e.getMessage());
            assertTrue(!e.getMessage().contains("abcdefgh12345678"), "no token in: " + e.getMessage());
        }

        int expected = dispatch || !fault.retried ? 1 : ATTEMPTS;
        assertEquals(expected, attempts.get(), "attempts");
        assertEquals(fault == Fault.NOT_SENT ? 0 : expected, callHits.get(), "requests the server saw");
        assertEquals(expected - 1, waits.size(), "waits " + waits);
        for (int i = 0; i < waits.size(); i++) {
            long ms = waits.get(i).toMillis();
            if (fault.minWaitMs > 0) {
                assertTrue(ms >= fault.minWaitMs && ms <= fault.maxWaitMs, "Retry-After wait " + ms + " ms");
            } else {
                long base = Math.min(100L << i, 400);
                assertTrue(ms >= base * 0.8 && ms <= base * 1.2, "backoff wait " + i + ": " + ms + " ms, base " + base);
            }
        }
    }

    private static Request request(Kind kind, HttpUrl url) {
        Request.Builder b = new Request.Builder().url(url);
        RequestBody body = RequestBody.create("x", MediaType.get("text/plain"));
        return switch (kind) {
            case READ, STATUS -> b.get().build();
            case UPLOAD_PART -> b.put(body).build();
            case KEYED -> b.post(body).header("Idempotency-Key", "k-1").build();
            case DISPATCH, DISPATCH_ASKING -> b.post(body).build();
        };
    }
}
