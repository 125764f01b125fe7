package dev.airlock.docker;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import dev.airlock.spi.ResourceLabels;
import dev.airlock.tck.GoneHolder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Snapshots against the real daemon: the image they make, what opens from it, and what gc removes. */
@ExtendWith(DockerFixture.class)
class DockerSnapshotTest {
    private static final byte[] BYTES = {0, 'a', 0, (byte) 0xff, '\n', 'z'};

    private static boolean imageExists(String id) throws Exception {
        return DockerFixture.docker(null, 30, "image", "inspect", id).exit() == 0;
    }

    private static void removeImages(List<String> ids) throws Exception {
        for (String id : ids) {
            DockerFixture.docker(null, 60, "rmi", id);
        }
    }

    private static byte[] read(Environment env, String path) throws IOException {
        try (InputStream in = env.files().read(path)) {
            return in.readAllBytes();
        }
    }

    @Test
    void aSnapshotIsAnAirlockImageThatOpensWithTheFilesAndWithoutThePrivateDir() throws Exception {
        String id = null;
        try (Environment env = Environments.open(DockerFixture.settings())) {
            env.exec("mkdir -p /srv/kept");
            env.files().write("/srv/kept/data", Payload.of(BYTES), WriteOptions.mode(0751));
            id = env.snapshot();
            String labels = DockerFixture.docker(null, 30, "image", "inspect", "--format",
                    "{{index .Config.Labels \"dev.airlock.managed\"}} {{index .Config.Labels \"dev.airlock.snapshot-of\"}}", id).out().strip();
            assertEquals("true " + DockerBackend.of(env).containerId(), labels, "the snapshot image must carry Airlock's labels");
            try (Environment from = Environments.open(DockerFixture.settings(DockerSettings.SNAPSHOT, id))) {
                assertArrayEquals(BYTES, read(from, "/srv/kept/data"));
                assertEquals(0751, from.files().stat("/srv/kept/data").orElseThrow().mode() & 07777);
                assertTrue(from.files().stat(env.target().privateDir()).isEmpty(), "the private dir is in the snapshot");
                assertEquals("up\n", from.exec("echo up").stdout().text(), "the container from a snapshot runs commands");
            }
            assertEquals("still\n", env.exec("echo still").stdout().text());
        } finally {
            if (id != null) {
                removeImages(List.of(id));
                assertFalse(imageExists(id));
            }
        }
    }

    @Test
    void aReadOnlyRootsSnapshotHoldsTheImageAsItWasNotItsTmpfs() throws Exception {
        String id = null;
        try (Environment env = Environments.open(DockerFixture.settings(DockerHardening.READ_ONLY, "true",
                DockerHardening.TMPFS, "/tmp:mode=1777,/root"))) {
            env.files().write("/root/on-tmpfs", Payload.ofUtf8("gone"));
            id = env.snapshot();
            try (Environment from = Environments.open(DockerFixture.settings(DockerSettings.SNAPSHOT, id))) {
                assertTrue(from.files().stat("/root/on-tmpfs").isEmpty(), "a tmpfs is never in a snapshot");
                assertEquals("up\n", from.exec("echo up").stdout().text());
            }
        } finally {
            if (id != null) {
                removeImages(List.of(id));
            }
        }
    }

    @Test
    void anUnknownSnapshotAndASnapshotWithAContainerAreOneLine() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.open(DockerFixture.settings(
                DockerSettings.SNAPSHOT, "sha256:" + "0".repeat(64))));
        assertTrue(e.getMessage().startsWith("no snapshot sha256:000") && !e.getMessage().contains("\n"), e.getMessage());
        ConfigurationException both = assertThrows(ConfigurationException.class, () -> Environments.open(DockerFixture.settings(
                DockerSettings.SNAPSHOT, "sha256:" + "0".repeat(64), DockerSettings.CONTAINER, "x")));
        assertFalse(both.getMessage().contains("\n"), both.getMessage());
    }

    @Test
    void gcRemovesUnusedStaleSnapshotsOnly() throws Exception {
        DockerSettings s = DockerSettings.from(DockerFixture.settings(), Map.of());
        String threeHoursAgo = Instant.now().minus(Duration.ofHours(3)).truncatedTo(ChronoUnit.SECONDS).toString();
        List<String> containers = new ArrayList<>();
        List<String> images = new ArrayList<>();
        String stale;
        String used;
        String foreign;
        String fresh;
        try (DockerDaemon daemon = new DockerDaemon(s)) {
            String source = daemon.createAndStart(s, "airlock-snap-src-" + System.nanoTime(),
                    DockerDaemon.labels(s, "snap-test", false), false).id();
            containers.add(source);
            Map<String, String> old = new LinkedHashMap<>(ResourceLabels.now(false).asMap(DockerDaemon.LABEL_PREFIX));
            old.put(DockerDaemon.LABEL_CREATED, threeHoursAgo);
            old.put(DockerDaemon.LABEL_HOLDER, GoneHolder.label());
            old.put(DockerDaemon.LABEL_SNAPSHOT_OF, source);
            stale = daemon.commit(source, old);
            images.add(stale);
            // Each commit is a new image even of one container: its created time differs.
            Thread.sleep(1100);
            used = daemon.commit(source, old);
            images.add(used);
            containers.add(daemon.createAndStart(DockerSettings.from(DockerFixture.settings(DockerSettings.SNAPSHOT, used), Map.of()),
                    "airlock-snap-user-" + System.nanoTime(), DockerDaemon.labels(s, "snap-user", false), false).id());
            Thread.sleep(1100);
            Map<String, String> theirs = new LinkedHashMap<>(old);
            theirs.put(DockerDaemon.LABEL_OWNER, "someone-else@" + ResourceLabels.currentOwner());
            foreign = daemon.commit(source, theirs);
            images.add(foreign);
            Thread.sleep(1100);
            Map<String, String> now = new LinkedHashMap<>(old);
            now.put(DockerDaemon.LABEL_CREATED, Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
            fresh = daemon.commit(source, now);
            images.add(fresh);
        }
        try {
            List<String> removed = new DockerProvider().gc(DockerFixture.settings(), Duration.ofHours(1), false);
            assertTrue(removed.contains(stale), removed.toString());
            assertFalse(imageExists(stale), "an unused stale snapshot must be gone after gc");
            assertTrue(imageExists(used), "a snapshot a container was made from stays");
            assertTrue(imageExists(foreign), "another owner's snapshot is not ours to remove");
            assertTrue(imageExists(fresh), "a snapshot younger than --older-than stays");
            assertTrue(imageExists(DockerFixture.IMAGE), "an image Airlock did not make is never removed");
        } finally {
            DockerFixture.docker(null, 60, "rm", "-f", "-v", containers.get(0), containers.get(1));
            removeImages(images);
        }
    }
}
