package dev.airlock.ssh;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.settings.Settings;
import dev.airlock.spi.ResourceLabels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code airlock gc} for ssh against a real sshd: what a JVM that died left on the host (its
 * private dir and the commands still running in it) is removed; a live environment's dir, another
 * owner's, an unlabelled or a young one is not. The sshd runs on this machine, so the test lays
 * the leftovers out on the same filesystem, in a base dir of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SshGcTest {
    private SshdServer server;
    private Path base;

    @BeforeAll
    void start() throws Exception {
        server = SshdServer.start();
        base = Files.createDirectories(server.dir.resolve("gc-base"));
    }

    @AfterAll
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private Settings settings() {
        return server.settings("airlock.private-dir.base", base.toString());
    }

    /** A private dir as an ssh environment lays it out, with labels, and its heartbeat {@code silent} ago. */
    private Path leftover(String name, String owner, Instant created, boolean kept, Duration silent) throws Exception {
        Path d = Files.createDirectories(base.resolve(name));
        Files.createDirectories(d.resolve("tmp"));
        ResourceLabels labels = new ResourceLabels(owner, created, "test", kept);
        StringBuilder sb = new StringBuilder();
        labels.asMap("airlock.").forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
        sb.append("environment=ssh-test\n");
        Files.writeString(d.resolve(SshLeftovers.LABELS), sb);
        Path alive = Files.createFile(d.resolve(SshLeftovers.ALIVE));
        Files.setLastModifiedTime(alive, FileTime.from(Instant.now().minus(silent)));
        return d;
    }

    @Test
    void whatADeadJvmLeftIsRemovedAndNothingElse() throws Exception {
        String me = ResourceLabels.currentOwner();
        Instant old = Instant.now().minus(Duration.ofHours(2));
        Duration dead = Duration.ofMinutes(30);
        Path gone = leftover("airlock-deadAAAAAA", me, old, false, dead);
        // A command tree still running in it: its own session and group, TMPDIR in its scratch dir, a child too.
        Process tree = new ProcessBuilder("setsid", "env", "TMPDIR=" + gone.resolve("tmp"), "sh", "-c", "sleep 1000 & exec sleep 1000")
                .start();
        try {
            collectsOnlyTheDeadOne(gone, tree, me, old, dead);
        } finally {
            if (tree.isAlive()) { // gc failed to: leave nothing running after the test
                new ProcessBuilder("kill", "-KILL", "-" + tree.pid()).start().waitFor();
            }
        }
    }

    private void collectsOnlyTheDeadOne(Path gone, Process tree, String me, Instant old, Duration dead) throws Exception {
        Path live = leftover("airlock-liveAAAAAA", me, old, false, Duration.ZERO);
        Path theirs = leftover("airlock-theirsAAAA", "someone@elsewhere", old, false, dead);
        Path young = leftover("airlock-youngAAAAA", me, Instant.now(), false, dead);
        Path kept = leftover("airlock-keptAAAAAA", me, old, true, dead);
        Path unlabelled = Files.createDirectories(base.resolve("airlock-nolabelAAA"));
        Thread.sleep(300); // the tree's child is forked

        List<String> removed = new SshProvider().gc(settings(), Duration.ofHours(1), false);

        assertEquals(1, removed.size(), removed.toString());
        assertTrue(removed.get(0).endsWith(":" + gone), removed.toString());
        assertFalse(Files.exists(gone));
        assertTrue(tree.waitFor(10, TimeUnit.SECONDS), "the dead environment's command was not killed");
        assertEquals(137, tree.exitValue());
        for (Path p : List.of(live, theirs, young, kept, unlabelled)) {
            assertTrue(Files.isDirectory(p), p + " was removed");
        }
        try (var dirs = Files.list(base)) {
            assertEquals(List.of(), dirs.filter(p -> !Files.exists(p.resolve(SshLeftovers.ALIVE)) && !p.equals(unlabelled)).toList(),
                    "gc's own environment left its dir behind");
        }

        List<String> withKept = new SshProvider().gc(settings(), Duration.ofHours(1), true);
        assertEquals(1, withKept.size(), withKept.toString());
        assertFalse(Files.exists(kept));
    }

    /** An open environment labels its private dir and keeps its heartbeat; gc leaves it alone even at --older-than 0. */
    @Test
    void anOpenEnvironmentIsLabelledAndNeverCollected() throws Exception {
        try (Environment env = Environments.open(settings())) {
            String dir = env.exec(ExecRequest.of("dirname \"$TMPDIR\"")).stdout().text().strip();
            Path labels = Path.of(dir, SshLeftovers.LABELS);
            String text = Files.readString(labels);
            assertTrue(text.contains("airlock.owner=" + ResourceLabels.currentOwner() + "\n")
                    && text.contains("airlock.managed=true\n"), text);
            assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(labels)));
            assertTrue(Files.exists(Path.of(dir, SshLeftovers.ALIVE)));
            // Even with its heartbeat made old, a young environment is spared by --older-than; at 0 only the heartbeat protects it.
            List<String> removed = new SshProvider().gc(settings(), Duration.ZERO, true);
            assertFalse(removed.stream().anyMatch(r -> r.endsWith(":" + dir)), removed.toString());
            assertTrue(Files.isDirectory(Path.of(dir)));
        }
    }
}
