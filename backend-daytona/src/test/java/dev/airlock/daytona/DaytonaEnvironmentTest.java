package dev.airlock.daytona;

import dev.airlock.BackendException;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.daytona.emulator.DaytonaEmulator;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.settings.Settings;
import dev.airlock.spi.ResourceLabels;
import dev.airlock.tck.Races;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Daytona client against the emulator: what a user would notice, failure paths included. */
class DaytonaEnvironmentTest {
    private static final String KEY = DaytonaEmulatorFixture.KEY;

    @TempDir
    Path state;
    DaytonaEmulatorFixture fixture;
    DaytonaEmulator emulator;
    CallJournal journal;
    FaultPlan faults;

    void start(FaultPlan plan) throws IOException {
        fixture = new DaytonaEmulatorFixture(state, plan);
        faults = plan;
        journal = fixture.journal;
        emulator = fixture.emulator;
    }

    @AfterEach
    void stop() {
        if (fixture != null) {
            fixture.close();
        }
    }

    Settings settings(String... more) {
        return fixture.settings(more);
    }

    Environment open(Settings s) {
        return fixture.open(s);
    }

    @Test
    void networkOffIsTheCreatesNetworkBlockAllAndAllowlistItsAllowLists() throws IOException {
        start(FaultPlan.none());
        try (Environment off = open(settings("airlock.network", "off")); Environment on = open(settings("airlock.network", "on"));
             Environment listed = open(settings("airlock.network", "allowlist", "airlock.network.allow.corp", "10.0.0.0/8",
                     "airlock.network.allow.one", "203.0.113.7", "airlock.network.allow.npm", "registry.npmjs.org"))) {
            assertTrue(emulator.networkBlocked(DaytonaBackend.of(off).sandboxId()), "off must create the sandbox with networkBlockAll");
            assertFalse(emulator.networkBlocked(DaytonaBackend.of(on).sandboxId()));
            assertEquals(List.of("", ""), emulator.allowLists(DaytonaBackend.of(on).sandboxId()));
            assertFalse(emulator.networkBlocked(DaytonaBackend.of(listed).sandboxId()));
            assertEquals(List.of("10.0.0.0/8,203.0.113.7/32", "registry.npmjs.org"), emulator.allowLists(DaytonaBackend.of(listed).sandboxId()));
        }
        int made = emulator.sandboxIds().size();
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> open(settings("airlock.network", "allowlist",
                "airlock.network.allow.web", "203.0.113.7:443")).close());
        assertEquals("airlock.network.allow.web=203.0.113.7/32:443: the daytona backend's allowlist takes host names and IPv4"
                + " ranges on every port (like 10.0.0.0/8), not a port", e.getMessage());
        assertEquals(made, emulator.sandboxIds().size(), "no sandbox may be created for a refused allowlist");
    }

    @Test
    void leftoverStdinIsNeverRunAsShellCode() throws IOException {
        start(FaultPlan.none());
        try (Environment env = open(settings())) {
            ExecResult r = env.exec(ExecRequest.builder("read line; printf '%s' \"$line\"")
                    .stdin("first\ntouch /tmp/pwned\n".getBytes(StandardCharsets.UTF_8)).build());
            assertEquals(0, r.exitCode());
            assertEquals("first", r.stdout().text());
            assertTrue(emulator.stat(DaytonaBackend.of(env).sandboxId(), "/tmp/pwned").isEmpty(), "the unread tail of stdin ran as a command");
        }
    }

    /**
     * A hostile command in an emulated sandbox: under bubblewrap as root, each sandbox has its own pid
     * and network namespaces, so the emulator's JVM cannot be signalled and its port cannot be reached.
     */
    @Test
    void aCommandCannotSignalTheEmulatorOrReachItsPort() throws IOException, InterruptedException {
        SandboxIsolation isolation = SandboxIsolation.detect(Settings.empty());
        dev.airlock.tck.Services.require(isolation.bwrap().isPresent() && "root".equals(System.getProperty("user.name")),
                "the emulator's sandbox namespaces need bubblewrap and root (CI runs as root): " + isolation.describe());
        start(FaultPlan.none());
        long jvm = ProcessHandle.current().pid();
        int port = emulator.url().getPort();
        try (Environment env = open(settings())) {
            ExecResult r = env.exec(ExecRequest.of("kill -0 " + jvm + " 2>/dev/null && echo signalled\n"
                    + "[ -e /proc/" + jvm + "/cmdline ] && echo seen\n"
                    + "bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + port + "' 2>/dev/null && echo reached\n"
                    + "setsid sleep 1234.5 >/dev/null 2>&1 &\necho done"));
            assertEquals("done\n", r.stdout().text(), "a command reached the emulator");
            // A background process that left the exec's session outlives it inside the sandbox, as in a
            // real one (deleting the session kills its group). Matched whole: a pattern found anywhere
            // also matched a launcher process whose argv held this command's text.
            // Asked until it is there: the background job may not have become `sleep` yet when the exec
            // that started it ends (setsid forks first); a bound, not a wait for an idle machine.
            String count = "";
            for (int i = 0; i < 300 && !count.equals("1\n"); i++) {
                count = env.exec(ExecRequest.of("pgrep -c -f '^sleep 1234[.]5$'")).stdout().text();
                if (!count.equals("1\n")) {
                    Thread.sleep(100);
                }
            }
            assertEquals("1\n", count);
        }
        assertEquals(0, emulator.liveProcesses(), "a sandbox process outlived its sandbox");
    }

    @Test
    void outputIsByteExactThroughFilesAndLeavesNoFileBehind() throws IOException {
        start(FaultPlan.none());
        byte[] payload = new byte[300_000];
        new Random(3).nextBytes(payload);
        try (Environment env = open(settings())) {
            ExecResult r = env.exec(ExecRequest.builder("cat; printf 'e\\000\\377' >&2; exit 5").stdin(payload).build());
            assertEquals(5, r.exitCode());
            assertArrayEquals(payload, r.stdout().bytes());
            assertArrayEquals(new byte[] {'e', 0, (byte) 0xff}, r.stderr().bytes());
            assertEquals(List.of(), emulator.find(DaytonaBackend.of(env).sandboxId(), "/tmp", ".airlock-stdin-"));
            assertEquals(List.of(), leftoverOutputs(env));
            journal.assertNoneCarries(payload);
            journal.assertNoneCarries(KEY);
        }
    }

    /**
     * Every answer to a command is lost after the daemon started it: the client learns the command
     * id from the session's list instead of sending the command again, so each runs exactly once.
     */
    @Test
    void aLostAnswerToACommandIsResolvedFromItsSessionNeverBySendingItAgain() throws IOException {
        start(FaultPlan.builder(5).always("session-exec", new dev.airlock.emulator.Fault.LoseResponse()).build());
        try (Environment env = open(settings())) {
            for (int i = 0; i < 3; i++) {
                ExecResult r = env.exec(ExecRequest.builder("cat; echo ran >> /tmp/runs").stdin("abc".getBytes(StandardCharsets.UTF_8)).build());
                assertEquals(0, r.exitCode());
                assertEquals("abc", r.stdout().text());
            }
            assertEquals("ran\nran\nran\n", env.exec(ExecRequest.of("cat /tmp/runs")).stdout().text(), "a command ran twice");
        }
        assertTrue(faults.faults("session-exec") >= 4, "the fault did not apply: " + faults.faultCounts());
        journal.assertNoDoubleDispatch();
    }

    /**
     * Downloads of the output files break off (the connection drops after some bytes) on about half
     * the calls: each cut download is made again and resumed past what arrived, so every run's
     * output is byte-exact, never short.
     */
    @Test
    void aCutOutputDownloadIsResumedToTheExactBytes() throws IOException {
        start(FaultPlan.builder(11).sometimes("files-download", 0.5, new dev.airlock.emulator.Fault.CutAfterBytes(70_000)).build());
        byte[] payload = new byte[300_000];
        new Random(5).nextBytes(payload);
        try (Environment env = open(settings("airlock.daytona.retry.max-attempts", "20"))) {
            for (int i = 0; i < 4; i++) {
                ExecResult r = env.exec(ExecRequest.builder("cat; printf 'err' >&2").stdin(payload).build());
                assertEquals(0, r.exitCode(), "run " + i);
                assertArrayEquals(payload, r.stdout().bytes(), "run " + i);
                assertEquals("err", r.stderr().text(), "run " + i);
            }
            assertEquals(List.of(), leftoverOutputs(env));
        }
        assertTrue(faults.faults("files-download") >= 4, "the cut did not apply: " + faults.faultCounts());
    }

    /**
     * Every download of more than 70 000 bytes breaks off there, so a 300 000-byte output can never
     * be fetched whole: the exec fails with a typed error, never returns the first part with exit 0.
     */
    @Test
    void anOutputThatCannotBeDownloadedWholeFailsTypedNeverShort() throws IOException {
        start(FaultPlan.builder(12).always("files-download", new dev.airlock.emulator.Fault.CutAfterBytes(70_000)).build());
        byte[] payload = new byte[300_000];
        new Random(6).nextBytes(payload);
        try (Environment env = open(settings())) {
            assertEquals("small output passes", env.exec(ExecRequest.of("printf 'small output passes'")).stdout().text());
            BackendException e = assertThrows(BackendException.class,
                    () -> env.exec(ExecRequest.builder("cat").stdin(payload).build()));
            assertTrue(e.getMessage().contains("lost"), e.getMessage());
            assertEquals(List.of(), leftoverOutputs(env));
            assertEquals(List.of(), emulator.find(DaytonaBackend.of(env).sandboxId(), "/tmp", ".airlock-stdin-"));
        }
    }

    /**
     * The answers to uploads are lost on about half the calls after the file was written: the
     * upload is made again whole, so the staged stdin is never missing or short.
     */
    @Test
    void aLostUploadAnswerLeavesTheStagedPayloadWhole() throws IOException {
        start(FaultPlan.builder(13).sometimes("files-upload", 0.5, new dev.airlock.emulator.Fault.LoseResponse()).build());
        byte[] payload = new byte[200_000];
        new Random(7).nextBytes(payload);
        try (Environment env = open(settings("airlock.daytona.retry.max-attempts", "20"))) {
            for (int i = 0; i < 4; i++) {
                ExecResult r = env.exec(ExecRequest.builder("cat").stdin(payload).build());
                assertEquals(0, r.exitCode(), "run " + i);
                assertArrayEquals(payload, r.stdout().bytes(), "run " + i);
            }
            assertEquals(List.of(), emulator.find(DaytonaBackend.of(env).sandboxId(), "/tmp", ".airlock-stdin-"));
        }
        assertTrue(faults.faults("files-upload") >= 2, "the loss did not apply: " + faults.faultCounts());
    }

    @Test
    void closeFromManyThreadsStopsAndDeletesTheSandboxExactlyOnce() throws Exception {
        start(FaultPlan.none());
        Environment env = open(settings());
        String id = DaytonaBackend.of(env).sandboxId();
        Races.atOnce(8, () -> {
            env.close();
            return null;
        });
        assertEquals(1, journal.entries("sandbox-stop").size());
        assertEquals(1, journal.entries("sandbox-delete").size());
        assertFalse(emulator.sandboxIds().contains(id));
        assertEquals(0, emulator.liveProcesses());
    }

    /**
     * Deletes answered 409 (a state change still pending, as Daytona answers while a sandbox stops):
     * close waits and deletes again until it is done.
     */
    @Test
    void aDeleteAnswered409WaitsAndIsSentAgainUntilTheSandboxIsGone() throws IOException {
        start(FaultPlan.builder(1).first("sandbox-delete", 2, new dev.airlock.emulator.Fault.Status(409, "", java.util.Optional.empty())).build());
        Environment env = open(settings());
        String id = DaytonaBackend.of(env).sandboxId();
        env.close();
        assertEquals(2, faults.faults("sandbox-delete"), faults.report());
        assertEquals(3, journal.entries("sandbox-delete").size(), "two conflicts, then the delete");
        assertEquals(1, journal.entries("sandbox-stop").size());
        assertFalse(emulator.sandboxIds().contains(id), "the sandbox is left");
    }

    /**
     * A delete answered 429 with {@code Retry-After-sandbox-lifecycle: 3} (Daytona's per-bucket
     * header, the only one sent): close waits the seconds it was asked for, far above the client's
     * own 10 ms backoff, then deletes once more. Measured against a close without the 429 on the
     * same emulator, so a slow machine does not pass for the wait. (A create is a dispatch: sent
     * once, a 429 on it fails typed, naming the wait.)
     */
    @Test
    void aRateLimitedDeleteWaitsForItsBucketsRetryAfter() throws IOException {
        start(FaultPlan.parse("sandbox-delete:status=429+3s@nth=2", 1));
        long plain = closing(open(settings()));
        Environment env = open(settings());
        String id = DaytonaBackend.of(env).sandboxId();
        long limited = closing(env);
        assertTrue(limited - plain >= 2500, "a rate-limited close took " + limited + " ms, a plain one " + plain + " ms");
        assertEquals(1, faults.faults("sandbox-delete"));
        assertEquals(3, journal.entries("sandbox-delete").size(), "one plain delete, then the 429 and one delete");
        assertFalse(emulator.sandboxIds().contains(id), "the sandbox is left");
    }

    private static long closing(Environment env) {
        long t0 = System.nanoTime();
        env.close();
        return Duration.ofNanos(System.nanoTime() - t0).toMillis();
    }

    @Test
    void anAttachedSandboxIsNeverStoppedAndADeleteThatFindsNothingIsFine() throws IOException {
        start(FaultPlan.none());
        DaytonaProvider p = new DaytonaProvider();
        String id = p.up(settings(), Duration.ofMinutes(90));
        try (DaytonaApi api = new DaytonaApi(DaytonaSettings.from(settings(), java.util.Map.of()), settings())) {
            assertEquals(90, api.get(id).path("autoStopInterval").asInt(), "up's ttl is the sandbox's idle time before it stops");
        }
        try (Environment env = open(settings(DaytonaSettings.SANDBOX_ID, id))) {
            assertEquals("hi", env.exec(ExecRequest.of("printf hi")).stdout().text());
        }
        assertEquals(0, journal.entries("sandbox-stop").size());
        assertTrue(emulator.sandboxIds().contains(id));
        p.down(settings(), id);
        assertFalse(emulator.sandboxIds().contains(id));
        assertThrows(ConfigurationException.class, () -> p.down(settings(), id));
    }

    /**
     * A sandbox removed under a running command (down from elsewhere, or the service's auto-delete)
     * ends the command with it: the exec fails with one line saying the sandbox is gone and what
     * to do, not "the connection was lost" (and no kill is tried over a connection to nothing).
     */
    @Test
    void aCommandTheSandboxEndsUnderFailsWithTheEndedLine() throws Exception {
        start(FaultPlan.none());
        DaytonaProvider p = new DaytonaProvider();
        String id = p.up(settings(), Duration.ofMinutes(90));
        try (Environment env = open(settings(DaytonaSettings.SANDBOX_ID, id))) {
            java.util.concurrent.ExecutorService own = java.util.concurrent.Executors.newSingleThreadExecutor();
            var running = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> env.exec(ExecRequest.of("touch /tmp/started; sleep 60")), own); // its own thread: never queued behind others
            long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            boolean started = false;
            while (!(started = env.exec(ExecRequest.of("test -f /tmp/started")).succeeded()) && System.nanoTime() < end) {
                Thread.sleep(100);
            }
            assertTrue(started, "the command never started, so its end under the sandbox's would not be what is tested");
            p.down(settings(), id);
            java.util.concurrent.ExecutionException failed = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> running.get(60, java.util.concurrent.TimeUnit.SECONDS), () -> "the exec passed: " + running.join());
            String line = failed.getCause().getMessage();
            assertTrue(failed.getCause() instanceof dev.airlock.BackendUnavailableException, failed.getCause() + "");
            // down stops, then deletes: the service may be asked at either step
            assertTrue(line.matches("the Daytona sandbox " + java.util.regex.Pattern.quote(id) + " has ended \\(it is"
                    + " (stopping|stopped|destroying|destroyed|deleted), which ended its commands\\); make a new one with"
                    + " 'airlock --backend daytona up --ttl DURATION' and attach to that"), line);
            own.shutdown();
        }
    }

    @Test
    void gcRemovesOrphansButKeepsWhatUpMade() throws IOException {
        start(FaultPlan.none());
        DaytonaProvider p = new DaytonaProvider();
        String kept = p.up(settings(), dev.airlock.spi.SandboxLifecycle.DEFAULT_TTL);
        // as a process that died before closing left it: this owner's labels, its holder gone
        String orphanId = createWithLabels("{\"airlock.managed\":\"true\",\"airlock.owner\":\"" + ResourceLabels.currentOwner()
                + "\",\"airlock.created\":\"2020-01-01T00:00:00Z\",\"airlock.version\":\"0.1.0\",\"airlock.holder\":\""
                + dev.airlock.tck.GoneHolder.label() + "\"}");
        String foreign = createWithLabels("{\"airlock.managed\":\"true\",\"airlock.owner\":\"someone@elsewhere\","
                + "\"airlock.created\":\"2020-01-01T00:00:00Z\",\"airlock.version\":\"0.1.0\"}");
        try (Environment live = open(settings())) {
            assertEquals(List.of(orphanId), p.gc(settings(), Duration.ZERO, false));
            assertEquals(java.util.Set.of(kept, foreign, DaytonaBackend.of(live).sandboxId()), java.util.Set.copyOf(emulator.sandboxIds()),
                    "gc removed more than the orphan (an open environment's sandbox?)");
        }
        assertEquals(java.util.Set.of(kept, foreign), java.util.Set.copyOf(emulator.sandboxIds()));
        assertEquals(List.of(kept), p.gc(settings(), Duration.ZERO, true));
        assertEquals(List.of(foreign), emulator.sandboxIds(), "gc removed another owner's sandbox");
    }

    /** A sandbox made straight through the API, as another user's Airlock (or another tool) would. */
    private String createWithLabels(String labels) throws IOException {
        try {
            var http = java.net.http.HttpClient.newHttpClient();
            var r = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(emulator.url() + "/sandbox"))
                    .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"labels\":" + labels + "}")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            return r.body().replaceAll(".*\"id\":\"([^\"]+)\".*", "$1");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    @Test
    void aFailedBuildIsReportedWithItsReasonAndNoSandboxIsLeft() throws IOException {
        start(FaultPlan.none());
        BackendException e = assertThrows(BackendException.class,
                () -> open(settings(DaytonaSettings.SNAPSHOT, DaytonaEmulator.FAILING_SNAPSHOT)));
        assertTrue(e.getMessage().contains("build_failed") && e.getMessage().contains("emulated build failure"), e.getMessage());
        assertTrue(emulator.sandboxIds().isEmpty());
    }

    /** The create answers {@code creating}; the poll then finds {@code error}: its reason is reported, the sandbox removed. */
    @Test
    void aSandboxThatEndsInErrorWhileStartingIsReportedWithItsReasonAndRemoved() throws IOException {
        start(FaultPlan.none());
        BackendException e = assertThrows(BackendException.class,
                () -> open(settings(DaytonaSettings.SNAPSHOT, DaytonaEmulator.ERROR_SNAPSHOT, DaytonaSettings.START_TIMEOUT, "20s")));
        assertTrue(e.getMessage().contains("ended in error") && e.getMessage().contains("emulated start failure"), e.getMessage());
        assertTrue(journal.entries("sandbox-get").size() >= 1, "the error was not found by polling");
        assertTrue(emulator.sandboxIds().isEmpty(), "the failed sandbox is left");
    }

    @Test
    void aMissingKeyNamesTheVariable() throws IOException {
        start(FaultPlan.none());
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> DaytonaSettings.from(Settings.of(DaytonaSettings.API_URL, emulator.url().toString()), Map.of()));
        assertTrue(e.getMessage().contains("DAYTONA_API_KEY"), e.getMessage());
        DaytonaSettings s = DaytonaSettings.from(Settings.empty(),
                Map.of("DAYTONA_API_KEY", "from-env", "DAYTONA_API_URL", "http://127.0.0.1:9/api"));
        assertEquals("http://127.0.0.1:9/api", s.apiUrl().toString());
        assertFalse(s.toString().contains("from-env"), "the key must never be printed");
    }

    private List<String> leftoverOutputs(Environment env) throws IOException {
        return fixture.outputsLeft(env);
    }

    @SuppressWarnings("unused")
    private static String hex(byte[] b) {
        return Arrays.toString(b);
    }
}
