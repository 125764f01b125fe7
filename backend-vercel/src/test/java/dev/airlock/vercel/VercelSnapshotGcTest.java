package dev.airlock.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.Payload;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.ResourceLabels;
import dev.airlock.spi.SnapshotLedger;
import dev.airlock.tck.GoneHolder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * gc deletes the Vercel snapshots this user's Airlock took (the ledger's) once nothing needs them:
 * older than asked, their source sandbox gone, no existing sandbox made from them; and forgets
 * them. Each test has its own ledger in a temp dir, never ~/.airlock.
 */
class VercelSnapshotGcTest {
    private static final VercelEmulatorFixture EMULATOR = new VercelEmulatorFixture(FaultPlan.none());

    @TempDir
    Path home;
    private SnapshotLedger ledger;
    private VercelProvider provider;

    @BeforeEach
    void ledger() {
        ledger = SnapshotLedger.of("vercel", Map.of("AIRLOCK_HOME", home.toString()));
        provider = new VercelProvider(ledger);
    }

    @AfterAll
    static void stop() {
        EMULATOR.close();
    }

    private Environment open(Settings s) {
        return provider.open(OpenContext.of(s));
    }

    private String takeAndClose() {
        try (Environment env = open(EMULATOR.settings())) {
            env.files().write("/tmp/kept", Payload.ofUtf8("kept bytes"));
            return env.snapshot();
        }
    }

    private List<String> gc(Duration olderThan) {
        return provider.gc(EMULATOR.settings(), olderThan, false);
    }

    private Set<String> ledgerIds() {
        Set<String> ids = new HashSet<>();
        ledger.entries().forEach(e -> ids.add(e.id()));
        return ids;
    }

    private static VercelApi api() {
        return new VercelApi(VercelSettings.from(EMULATOR.settings(), Map.of()), EMULATOR.settings());
    }

    @Test
    void aSnapshotOfAClosedEnvironmentIsDeletedAndForgotten() {
        String id = takeAndClose();
        assertEquals(Set.of(id), ledgerIds(), "the snapshot was recorded with its source");
        assertTrue(EMULATOR.emulator.snapshotExists(id));

        assertTrue(gc(Duration.ZERO).contains(id), "gc names the snapshot it deleted");
        assertFalse(EMULATOR.emulator.snapshotExists(id), "gc left the snapshot " + id);
        assertEquals(Set.of(), ledgerIds(), "gc did not forget the snapshot it deleted");
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> open(EMULATOR.settings().with(VercelSettings.SNAPSHOT, id)).close());
        assertTrue(e.getMessage().startsWith("there is no Vercel snapshot " + id), e.getMessage());
    }

    /** The first of two snapshots is no sandbox's current one any more: only its source's existence keeps it. */
    @Test
    void aSnapshotIsKeptWhileItsSourceSandboxExists() {
        String first;
        String second;
        try (Environment env = open(EMULATOR.settings())) {
            first = env.snapshot();
            second = env.snapshot();
            List<String> removed = gc(Duration.ZERO);
            assertFalse(removed.contains(first) || removed.contains(second), removed.toString());
            assertTrue(EMULATOR.emulator.snapshotExists(first), "gc deleted the snapshot of a sandbox still open");
            assertEquals(Set.of(first, second), ledgerIds());
        }
        List<String> removed = gc(Duration.ZERO);
        assertTrue(removed.containsAll(List.of(first, second)), "once their source is gone, the next gc takes them: " + removed);
        assertFalse(EMULATOR.emulator.snapshotExists(first));
        assertFalse(EMULATOR.emulator.snapshotExists(second));
    }

    @Test
    void aSnapshotASandboxWasMadeFromIsKept() {
        String id = takeAndClose();
        try (Environment from = open(EMULATOR.settings().with(VercelSettings.SNAPSHOT, id))) {
            assertFalse(gc(Duration.ZERO).contains(id));
            assertTrue(EMULATOR.emulator.snapshotExists(id), "gc deleted the snapshot a live sandbox was made from");
            assertEquals("kept bytes", from.exec(ExecRequest.builder("cat /tmp/kept").timeout(Duration.ofSeconds(30)).build())
                    .stdout().text());
        }
        assertTrue(gc(Duration.ZERO).contains(id));
        assertFalse(EMULATOR.emulator.snapshotExists(id));
    }

    @Test
    void aSnapshotThatIsASandboxsCurrentSnapshotIsKept() {
        String id = takeAndClose();
        try (Environment other = open(EMULATOR.settings()); VercelApi api = api()) {
            api.setCurrentSnapshot(VercelBackend.of(other).id(), id);
            assertFalse(gc(Duration.ZERO).contains(id));
            assertTrue(EMULATOR.emulator.snapshotExists(id), "gc deleted a sandbox's current snapshot");
        }
        assertTrue(gc(Duration.ZERO).contains(id));
    }

    @Test
    void aSnapshotNewerThanAskedIsKept() {
        String id = takeAndClose();
        assertFalse(gc(Duration.ofHours(1)).contains(id));
        assertTrue(EMULATOR.emulator.snapshotExists(id), "gc deleted a snapshot younger than --older-than");
        assertEquals(Set.of(id), ledgerIds());
        assertTrue(gc(Duration.ZERO).contains(id));
    }

    /** As Daytona's gc: a snapshot whose source sandbox this very run deleted is left; the next run takes it. */
    @Test
    void aSnapshotWhoseSourceThisRunDeletedIsLeftForTheNext() {
        String orphan;
        String id;
        try (VercelApi api = api()) {
            Map<String, String> left = new HashMap<>(VercelBackend.tags(false)); // as a JVM that died left it
            left.put(VercelBackend.LABEL_PREFIX + ResourceLabels.HOLDER, GoneHolder.label());
            VercelApi.SessionInfo info = api.create(left);
            orphan = info.sandboxName();
            VercelBackend.awaitRunning(api, info.sessionId());
            id = api.snapshot(info.sessionId());
            ledger.record(id, VercelProvider.ledgerSource(VercelSettings.from(EMULATOR.settings(), Map.of()), orphan),
                    Instant.now().minus(Duration.ofHours(2)));
        }
        List<String> first = gc(Duration.ZERO);
        assertTrue(first.contains(orphan), first.toString());
        assertFalse(first.contains(id), "the snapshot went in the run that deleted its source");
        assertTrue(EMULATOR.emulator.snapshotExists(id));
        assertTrue(gc(Duration.ZERO).contains(id));
        assertFalse(EMULATOR.emulator.snapshotExists(id));
    }

    @Test
    void aSnapshotTheServiceNoLongerHasIsForgotten() {
        String id = takeAndClose();
        try (VercelApi api = api()) {
            api.deleteSnapshot(id);
        }
        ledger.record("snap_neverexisted0000000000", VercelProvider.ledgerSource(VercelSettings.from(EMULATOR.settings(), Map.of()),
                "sbx-long-gone"), Instant.now().minus(Duration.ofDays(1)));
        List<String> removed = gc(Duration.ZERO);
        assertTrue(removed.contains(id) && removed.contains("snap_neverexisted0000000000"), removed.toString());
        assertEquals(Set.of(), ledgerIds());
    }

    /**
     * One ledger serves every project: a snapshot taken in another (its source is not in this
     * project's listing, which does not mean gone) is neither deleted nor forgotten.
     */
    @Test
    void anotherProjectsSnapshotIsLeftAlone() {
        String id = takeAndClose();
        ledger.forget(List.of(id));
        Settings elsewhere = EMULATOR.settings().with(VercelSettings.PROJECT_ID, "prj_elsewhere");
        ledger.record(id, VercelProvider.ledgerSource(VercelSettings.from(elsewhere, Map.of()), "sbx-of-elsewhere"),
                Instant.now().minus(Duration.ofDays(1)));
        assertFalse(gc(Duration.ZERO).contains(id));
        assertTrue(EMULATOR.emulator.snapshotExists(id), "gc deleted a snapshot of another project");
        assertEquals(Set.of(id), ledgerIds(), "gc forgot a snapshot of another project");
        try (VercelApi api = api()) {
            api.deleteSnapshot(id);
        }
    }

    /** A ledger that cannot be written costs the snapshot nothing (a warning says gc will not collect it). */
    @Test
    void aSnapshotSucceedsWhenTheLedgerCannotBeWritten() throws Exception {
        Files.writeString(home.resolve("snapshots"), "a file where the ledger's dir would be");
        String id;
        try (Environment env = open(EMULATOR.settings())) {
            env.files().write("/tmp/kept", Payload.ofUtf8("kept bytes"));
            id = env.snapshot();
            assertEquals("kept bytes", env.exec(ExecRequest.builder("cat /tmp/kept").timeout(Duration.ofSeconds(30)).build())
                    .stdout().text(), "the environment carries on after the snapshot");
        }
        assertTrue(EMULATOR.emulator.snapshotExists(id));
        try (VercelApi api = api()) {
            api.deleteSnapshot(id);
        }
    }

    /** The listing gc reads is followed page after page; the emulator refuses a bad page size or cursor, as a service would. */
    @Test
    void theSandboxListingIsReadPageAfterPage() throws Exception {
        try (Environment a = open(EMULATOR.settings()); Environment b = open(EMULATOR.settings());
             Environment c = open(EMULATOR.settings()); VercelApi api = api()) {
            Set<String> all = new HashSet<>();
            for (JsonNode sb : api.sandboxes()) {
                all.add(sb.path("name").asText());
            }
            List<String> paged = new java.util.ArrayList<>();
            for (JsonNode sb : api.sandboxes("limit", "1")) {
                paged.add(sb.path("name").asText());
            }
            assertTrue(all.size() >= 3, all.toString());
            assertEquals(all.size(), paged.size(), "a page lost or repeated: " + paged);
            assertEquals(all, new HashSet<>(paged));
        }
        assertEquals(400, get("/v2/sandboxes?project=prj_airlock_test&limit=0").statusCode());
        assertEquals(400, get("/v2/sandboxes?project=prj_airlock_test&cursor=bm9zdWNo").statusCode());
    }

    private static HttpResponse<String> get(String pathAndQuery) throws Exception {
        URI u = URI.create(EMULATOR.emulator.url() + pathAndQuery + "&teamId=" + VercelEmulatorFixture.TEAM);
        HttpRequest r = HttpRequest.newBuilder(u).header("Authorization", "Bearer " + VercelEmulatorFixture.TOKEN)
                .timeout(Duration.ofSeconds(60)).GET().build();
        return HttpClient.newHttpClient().send(r, HttpResponse.BodyHandlers.ofString());
    }
}
