package dev.airlock.emulator.reference;

import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import dev.airlock.DispatchOutcomeUnknownException;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.Fault;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.remote.BearerToken;
import dev.airlock.remote.CallKind;
import dev.airlock.remote.Http;
import dev.airlock.remote.HttpClients;
import dev.airlock.remote.HttpSettings;
import dev.airlock.remote.Redactor;
import dev.airlock.remote.RemoteCalls;
import dev.airlock.remote.Resource;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.remote.Service;
import dev.airlock.settings.Secret;
import dev.airlock.settings.Settings;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The two modules together: remote/'s client plumbing against the reference emulator with a
 * fault plan, and the journal as the witness of what travelled and how often.
 */
class ReferenceEmulatorTest {
    static final Service SERVICE = new Service("Reference", "REFERENCE_TOKEN", "airlock.reference.url");

    @TempDir
    Path state;
    ReferenceEmulator emulator;
    CallJournal journal;
    FaultPlan faults;
    OkHttpClient http = HttpClients.create(HttpSettings.defaults());
    List<Duration> waits = new ArrayList<>();
    RemoteCalls calls = new RemoteCalls(SERVICE, RetryPolicy.defaults().withSleeper(waits::add).withSeed(7));
    BearerToken token = new BearerToken(Secret.of("opaque-not-a-jwt"));

    void start(FaultPlan plan) throws IOException {
        faults = plan;
        journal = new CallJournal();
        emulator = new ReferenceEmulator(new EmulatorContext(new InetSocketAddress("127.0.0.1", 0), state,
                SandboxIsolation.detect(Settings.empty()), plan, journal, Settings.empty()));
    }

    @AfterEach
    void stop() {
        if (emulator != null) {
            emulator.close();
        }
        HttpClients.close(http);
    }

    HttpUrl url(String path) {
        return HttpUrl.get(emulator.url().toString() + path);
    }

    String create(String image) {
        return calls.call(CallKind.KEYED, "sandbox-create", Resource.none(), () -> Http.execute(http,
                token.apply(new Request.Builder().url(url("/sandboxes?image=" + image))
                        .post(RequestBody.create(new byte[0]))).build(), "", Redactor.of(), r -> {
                            Matcher m = Pattern.compile("\"id\":\"([^\"]+)\"").matcher(r.body().string());
                            assertTrue(m.find());
                            return m.group(1);
                        }));
    }

    /** Dispatches through remote/ (never retried); answers stdout and the exit code. */
    String exec(String sandbox, String command, String execId) {
        return calls.dispatch("exec", Resource.sandbox(sandbox), () -> Http.execute(http,
                token.apply(new Request.Builder().url(url("/sandboxes/" + sandbox + "/exec"))
                        .header("X-Exec-Id", execId)
                        .post(RequestBody.create(command, MediaType.get("text/plain")))).build(), "", Redactor.of(),
                ReferenceEmulatorTest::ndjson));
    }

    String read(String sandbox, String path) {
        return calls.call(CallKind.READ, "file-read", Resource.path(path), () -> Http.execute(http,
                token.apply(new Request.Builder().url(url("/sandboxes/" + sandbox + "/files?path=" + path))).build(), "",
                Redactor.of(), r -> r.body().string()));
    }

    static String ndjson(Response r) throws IOException {
        StringBuilder out = new StringBuilder();
        String exit = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body().byteStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                Matcher d = Pattern.compile("\"stream\":\"stdout\",\"data\":\"(.*)\"}").matcher(line);
                Matcher x = Pattern.compile("\"exitCode\":(\\d+)").matcher(line);
                if (d.find()) {
                    out.append(d.group(1).replace("\\n", "\n"));
                } else if (x.find()) {
                    exit = x.group(1);
                }
            }
        }
        if (exit == null) {
            throw new IOException("the stream ended without an exit code");
        }
        return out + "exit " + exit;
    }

    @Test
    void aDispatchWhoseAnswerIsLostRanOnceAndIsNeverSentAgain() throws IOException {
        start(FaultPlan.builder(1).first("exec", 1, Fault.loseResponse()).build());
        String sb = create("registry.example/never-pulled:1");
        DispatchOutcomeUnknownException e = assertThrows(DispatchOutcomeUnknownException.class,
                () -> exec(sb, "echo ran >> /root/count", "x-1"));
        assertTrue(e.getMessage().contains("was not sent again"), e.getMessage());
        assertEquals("ran\n", read(sb, "/root/count"), "the work was done exactly once");
        assertEquals(1, journal.entries().stream().filter(CallJournal.Entry::dispatch).count());
        journal.assertNoDoubleDispatch();
        assertEquals(Map.of("exec", 1L), faults.faultCounts());
    }

    @Test
    void aStreamCutAfterALineIsAnUnknownOutcomeToo() throws IOException {
        start(FaultPlan.builder(1).nth("exec", 2, Fault.cutAfterLines(1)).build());
        String sb = create("debian:12");
        assertEquals("a\nexit 0", exec(sb, "echo a", "x-1"));
        assertThrows(DispatchOutcomeUnknownException.class, () -> exec(sb, "echo a; echo b", "x-2"));
        journal.assertNoDoubleDispatch();
    }

    @Test
    void readsRideOutFaultsAndEachIsCountedOnce() throws IOException {
        start(FaultPlan.builder(1).first("file-read", 2, Fault.unavailable())
                .first("sandbox-get", 1, Fault.rateLimited(Duration.ofSeconds(3))).build());
        String sb = create("debian:12");
        exec(sb, "printf hello > /root/f", "x-1");
        assertEquals("hello", read(sb, "/root/f"));
        assertEquals(3, journalled("file-read", 3), "two faults, then the answer");
        assertEquals(2, faults.faults("file-read"));
        assertEquals(2, waits.size(), "backoff between the attempts: " + waits);
        String got = calls.call(CallKind.STATUS, "sandbox-get", Resource.sandbox(sb), () -> Http.execute(http,
                token.apply(new Request.Builder().url(url("/sandboxes/" + sb))).build(), "", Redactor.of(), r -> r.body().string()));
        assertTrue(got.contains("\"state\":\"started\""), got);
        Duration asked = waits.get(2);
        assertTrue(asked.compareTo(Duration.ofSeconds(3)) >= 0 && asked.compareTo(Duration.ofMillis(3600)) <= 0,
                "Retry-After honoured: " + asked);
    }

    @Test
    void aCutDownloadNeverPassesForAWholeOneAndADelayChangesNothing() throws IOException {
        start(FaultPlan.builder(1).first("file-read", 1, Fault.cutAfterBytes(3))
                .first("sandbox-get", 1, Fault.delay(Duration.ofMillis(20))).build());
        String sb = create("debian:12");
        exec(sb, "printf hello-world > /root/f", "x-1");
        assertEquals("hello-world", read(sb, "/root/f"), "the cut answer was retried, not taken as the file");
        assertEquals(2, journalled("file-read", 2));
        String got = calls.call(CallKind.STATUS, "sandbox-get", Resource.sandbox(sb), () -> Http.execute(http,
                token.apply(new Request.Builder().url(url("/sandboxes/" + sb))).build(), "", Redactor.of(), r -> r.body().string()));
        assertTrue(got.contains(sb), got);
        assertEquals(Map.of("file-read", 1L, "sandbox-get", 1L), faults.faultCounts());
    }

    @Test
    void aRateLimitedDispatchIsNotRetriedAndNeverRan() throws IOException {
        start(FaultPlan.builder(1).first("exec", 1, Fault.rateLimited(Duration.ofSeconds(1))).build());
        String sb = create("debian:12");
        assertThrows(BackendUnavailableException.class, () -> exec(sb, "echo ran >> /root/count", "x-1"));
        assertEquals(0, journal.entries().stream().filter(CallJournal.Entry::dispatch).count());
        assertEquals(1, journal.entries("exec").size());
        assertThrows(dev.airlock.NoSuchPathException.class, () -> read(sb, "/root/count"));
    }

    @Test
    void anyNonEmptyTokenIsAcceptedAndNoneIsRefused() throws IOException {
        start(FaultPlan.none());
        String sb = create("debian:12");
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> calls.call(CallKind.READ, "sandbox-get",
                Resource.sandbox(sb), () -> Http.execute(http, new Request.Builder().url(url("/sandboxes/" + sb)).build(), "",
                        Redactor.of(), r -> r.body().string())));
        assertTrue(e.getMessage().contains("check REFERENCE_TOKEN"), e.getMessage());
        assertThrows(dev.airlock.EnvironmentClosedException.class, () -> exec("sb-404", "true", UUID.randomUUID().toString()));
    }

    /**
     * The journal's count for a call once it reaches {@code expected} (or after 5 s): the server
     * journals a call after its answer is written, so the client can hold the answer a moment
     * before the entry exists.
     */
    private int journalled(String call, int expected) {
        long end = System.nanoTime() + 5_000_000_000L;
        int n = journal.entries(call).size();
        while (n < expected && System.nanoTime() < end) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            n = journal.entries(call).size();
        }
        return n;
    }
}
