package dev.airlock.cli;

import dev.airlock.docker.DockerFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.Random;

import static dev.airlock.cli.Airlock.raw;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ./airlock} on the docker backend against a real daemon: one-shot exec, and up/write/exec/read/down. */
@ExtendWith(DockerFixture.class)
class DockerCliIT {
    private static final String[] DOCKER = {"--backend", "docker", "--set", "airlock.docker.image=" + DockerFixture.IMAGE,
            "--set", "airlock.docker.pull=never"};

    private static Airlock docker(String... args) {
        String[] all = new String[DOCKER.length + args.length];
        System.arraycopy(DOCKER, 0, all, 0, DOCKER.length);
        System.arraycopy(args, 0, all, DOCKER.length, args.length);
        return raw(all);
    }

    @Test
    void oneShotExecIsByteExactAndKeepsTheExitStatus() {
        byte[] data = new byte[(1 << 20) + 7];
        new Random(3).nextBytes(data);
        for (int i = 0; i < data.length; i += 512) {
            data[i] = 0;
        }
        Airlock.Result r = docker("exec", "--", "cat; echo err >&2; exit 7").stdin(data).run();
        assertEquals(7, r.exit(), r::toString);
        assertArrayEquals(data, r.stdout());
        assertEquals("err\n", r.err());
    }

    /** --debug printed every byte and header docker-java exchanged with the daemon: 1,037 lines for one {@code exec true}. */
    @Test
    void debugShowsAirlocksLinesWithoutTheWire() {
        Airlock.Result r = docker("--debug", "exec", "-n", "true").run();
        assertEquals(0, r.exit(), r::toString);
        assertTrue(r.errLines().stream().anyMatch(l -> l.contains("[DEBUG] Session - opened the docker environment")), r.err());
        assertEquals(List.of(), r.errLines().stream().filter(l -> l.contains("[DEBUG] wire") || l.contains("[DEBUG] headers")
                || l.contains("[DEBUG] InternalHttpClient") || l.contains("[DEBUG] InspectExecCmdExec")).toList());
        assertTrue(r.errLines().size() < 50, r.errLines().size() + " lines");
    }

    @Test
    void snapshotPrintsAnIdThatOpensWithTheFilesAndBadUseIsOneLine() throws Exception {
        Airlock.Result unattached = docker("snapshot").run();
        assertEquals(2, unattached.exit(), unattached::toString);
        assertEquals(1, unattached.errLines().size(), unattached::toString);
        assertTrue(unattached.err().contains("airlock.docker.container"), unattached::toString);
        Airlock.Result local = raw("--backend", "local", "snapshot").run();
        assertEquals(2, local.exit(), local::toString);
        assertEquals(1, local.errLines().size(), local::toString);
        assertTrue(local.err().contains("the local backend takes no snapshots"), local::toString);
        Airlock.Result up = docker("up").run();
        assertEquals(0, up.exit(), up::toString);
        String id = up.out().strip();
        String snapshot = null;
        try {
            String attach = "airlock.docker.container=" + id;
            byte[] content = {0, 1, 2, (byte) 0xff, '\n', 0};
            assertEquals(0, docker("--set", attach, "write", "/srv/kept.bin").stdin(content).run().exit());
            Airlock.Result s = docker("--set", attach, "snapshot").run();
            assertEquals(0, s.exit(), s::toString);
            snapshot = s.out().strip();
            assertTrue(snapshot.matches("sha256:[0-9a-f]{64}"), "snapshot prints the image id: " + s.out());
            Airlock.Result r = docker("--set", "airlock.docker.snapshot=" + snapshot, "read", "/srv/kept.bin").run();
            assertEquals(0, r.exit(), r::toString);
            assertArrayEquals(content, r.stdout());
        } finally {
            assertEquals(0, docker("down", id).run().exit());
            if (snapshot != null) {
                DockerFixture.docker(null, 60, "rmi", snapshot);
            }
        }
    }

    @Test
    void upThenWriteExecReadAcrossInvocationsThenDown() throws Exception {
        Airlock.Result up = docker("up").run();
        assertEquals(0, up.exit(), up::toString);
        String id = up.out().strip();
        assertTrue(id.matches("[0-9a-f]{64}"), "up prints the container id: " + up.out());
        try {
            String attach = "airlock.docker.container=" + id;
            byte[] content = {0, 1, 2, (byte) 0xff, '\n', 0};
            Airlock.Result w = docker("--set", attach, "write", "/tmp/kept/data.bin").stdin(content).run();
            assertEquals(0, w.exit(), w::toString);
            Airlock.Result e = docker("--set", attach, "exec", "-n", "--", "wc -c < /tmp/kept/data.bin").run();
            assertEquals(0, e.exit(), e::toString);
            assertEquals("6", e.out().strip());
            Airlock.Result r = docker("--set", attach, "read", "/tmp/kept/data.bin").run();
            assertEquals(0, r.exit(), r::toString);
            assertArrayEquals(content, r.stdout());
            Airlock.Result gc = docker("gc", "--older-than", "30d").run();
            assertEquals(0, gc.exit(), gc::toString);
            assertTrue(!gc.out().contains(id), "gc keeps what up made unless --all");
        } finally {
            Airlock.Result down = docker("down", id).run();
            assertEquals(0, down.exit(), down::toString);
        }
        assertNotEquals(0, DockerFixture.docker(null, 30, "inspect", id).exit(), "down removed the container");
        Airlock.Result again = docker("down", id).run();
        assertEquals(2, again.exit(), again::toString);
        assertEquals(1, again.errLines().size(), again::toString);
    }

    /**
     * {@code up --port} prints the id, then one {@code PORT URL} line per port; a server started in
     * the container answers there with the bytes it served, {@code url PORT} gives the same URL, an
     * undeclared port is one usage line, and after {@code down} the URL answers no more.
     */
    @Test
    void upWithPortsPrintsTheirUrlsWhereTheSandboxsServerAnswers() throws Exception {
        Airlock.Result up = docker("--set", "airlock.network=on", "up", "--port", "8000", "--port", "3000").run();
        assertEquals(0, up.exit(), up::toString);
        String[] lines = up.out().split("\n");
        assertEquals(3, lines.length, up::toString);
        String id = lines[0];
        assertTrue(id.matches("[0-9a-f]{64}"), "up prints the container id first: " + up.out());
        try {
            assertTrue(lines[1].matches("3000 http://127\\.0\\.0\\.1:\\d+/"), up.out());
            assertTrue(lines[2].matches("8000 http://127\\.0\\.0\\.1:\\d+/"), up.out());
            String attach = "airlock.docker.container=" + id;
            byte[] served = new byte[10_000];
            new Random(8).nextBytes(served);
            served[0] = 0;
            assertEquals(0, docker("--set", attach, "write", "/srv/served.bin").stdin(served).run().exit());
            Airlock.Result start = docker("--set", attach, "exec", "-n", "--", "busybox httpd -p 8000 -h /srv").run();
            assertEquals(0, start.exit(), start::toString);
            Airlock.Result url = docker("--set", attach, "url", "8000").run();
            assertEquals(0, url.exit(), url::toString);
            assertEquals(lines[2].substring("8000 ".length()), url.out().strip(), "url 8000 gives what up printed");
            java.net.URI served8000 = java.net.URI.create(url.out().strip()).resolve("/served.bin");
            assertArrayEquals(served, get(served8000), "the bytes through " + served8000);
            Airlock.Result undeclared = docker("--set", attach, "url", "9000").run();
            assertEquals(2, undeclared.exit(), undeclared::toString);
            assertEquals(List.of("airlock: usage: port 9000 is not published by container " + id.substring(0, 12)
                    + " (it publishes 3000,8000); ports are declared when the container is created: open one with"
                    + " airlock.ports=9000 (airlock up --port 9000)"), undeclared.errLines());
        } finally {
            assertEquals(0, docker("down", id).run().exit());
        }
        java.net.URI gone = java.net.URI.create(lines[2].substring("8000 ".length()));
        assertThrows(java.io.IOException.class, () -> get(gone), gone + " still answers after down");
    }

    private static byte[] get(java.net.URI uri) throws Exception {
        Exception last = null;
        for (int i = 0; i < 50; i++) {
            try (java.io.InputStream in = uri.toURL().openStream()) {
                return in.readAllBytes();
            } catch (java.io.IOException e) {
                last = e;
                Thread.sleep(100);
            }
        }
        throw last;
    }

    @Test
    void urlOnABackendWithoutSandboxesIsAUsageError() {
        Airlock.Result r = raw("--backend", "local", "url", "3000").run();
        assertEquals(2, r.exit(), r::toString);
        assertEquals(1, r.errLines().size(), r::toString);
        assertTrue(r.err().startsWith("airlock: usage: the local backend has no sandboxes"), r.err());
    }

    @Test
    void upOnABackendWithoutSandboxesIsAUsageError() {
        Airlock.Result r = raw("--backend", "local", "up").run();
        assertEquals(2, r.exit(), r::toString);
        assertTrue(r.err().startsWith("airlock: usage: the local backend has no sandboxes"), r.err());
        assertTrue(r.err().contains("docker"), r.err());
    }

    @Test
    void aMissingImageNamesTheSetting() {
        Airlock.Result r = raw("--backend", "docker", "exec", "true").run();
        assertEquals(125, r.exit(), r::toString);
        assertTrue(r.err().contains("airlock.docker.image"), r.err());
        assertEquals(0, r.stdout().length);
    }

    @Test
    void aFailedPullIsOneAirlockLineWithoutAStackTrace() {
        Airlock.Result r = raw("--backend", "docker", "--set", "airlock.docker.image=airlock-test/absent", "exec", "true").run();
        assertEquals(125, r.exit(), r::toString);
        assertTrue(r.err().startsWith("airlock: ") && r.err().contains(
                "image airlock-test/absent:latest is not on the Docker host and pulling it failed: "), r.err());
        assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
        assertEquals(0, r.stdout().length);
    }
}
