package dev.airlock.cli;

import dev.airlock.ssh.SshdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static dev.airlock.cli.Airlock.airlock;
import static dev.airlock.cli.ExecIT.assertOneLine;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./airlock --backend ssh} against a real OpenSSH server on loopback (the ssh backend's
 * test fixture): exec, write and read byte-exact, the remote exit status, and a refused host key.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SshBackendIT {
    private SshdServer server;

    @BeforeAll
    void start() throws Exception {
        server = SshdServer.start();
    }

    @AfterAll
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    /** {@code --backend ssh --set K=V...} for the fixture's server, then {@code args}. */
    private Airlock ssh(Map<String, String> overrides, String... args) {
        Map<String, String> settings = new java.util.LinkedHashMap<>(server.settingsMap());
        settings.putAll(overrides);
        List<String> all = new ArrayList<>(List.of("--backend", "ssh"));
        settings.forEach((k, v) -> {
            if (!k.equals("airlock.backend")) {
                all.add("--set");
                all.add(k + "=" + v);
            }
        });
        all.addAll(List.of(args));
        return airlock(all.toArray(new String[0]));
    }

    private Airlock ssh(String... args) {
        return ssh(Map.of(), args);
    }

    @Test
    void execStreamsStdinAndOutputByteExactAndKeepsTheExitStatus() {
        byte[] data = new byte[1 << 20];
        new Random(5).nextBytes(data);
        for (int i = 0; i < data.length; i += 7) {
            data[i] = 0;
        }
        Airlock.Result r = ssh("exec", "--", "cat;", "echo", "to-stderr", ">&2;", "exit", "7").stdin(data).run();

        assertEquals(7, r.exit(), r::toString);
        assertArrayEquals(data, r.stdout(), "stdout bytes");
        assertEquals("to-stderr\n", r.err());
    }

    @Test
    void writeThenReadRoundTripsTheBytesOnTheRemoteHost() throws Exception {
        byte[] content = new byte[300_000];
        new Random(9).nextBytes(content);
        content[0] = 0;
        Path file = server.dir.resolve("cli dir/written.bin");

        Airlock.Result w = ssh("write", file.toString()).stdin(content).run();
        assertEquals(0, w.exit(), w::toString);
        assertEquals("", w.err());
        // The fixture's sshd runs on this machine: the remote file is this file.
        assertArrayEquals(content, Files.readAllBytes(file), "bytes on the remote disk");

        Airlock.Result r = ssh("read", file.toString()).run();
        assertEquals(0, r.exit(), r::toString);
        assertArrayEquals(content, r.stdout(), "bytes read back");
    }

    @Test
    void anUnknownHostKeyIsRefusedInOneLine() throws Exception {
        Path empty = Files.createTempFile(server.dir, "known_hosts", "");
        Airlock.Result r = ssh(Map.of("airlock.ssh.known-hosts", empty.toString()), "exec", "--", "echo", "never").run();

        assertEquals(125, r.exit(), r::toString);
        assertOneLine(r, "airlock: ");
        assertTrue(r.err().contains("SHA256:"), r::err);
        assertEquals(0, r.stdout().length);
        assertEquals("", Files.readString(empty), "a refused key is never recorded");
    }

    /** gc works for ssh (what dead JVMs left on the host); up has no meaning there and says so in one line. */
    @Test
    void gcRunsOnTheHostAndUpIsRefusedInOneLine() throws Exception {
        Path base = Files.createDirectories(server.dir.resolve("cli-gc-base"));
        Airlock.Result gc = ssh(Map.of("airlock.private-dir.base", base.toString()), "gc", "--older-than", "1h").run();
        assertEquals(0, gc.exit(), gc::toString);
        assertEquals(0, gc.stdout().length, "nothing left by a dead JVM here");
        try (var left = Files.list(base)) {
            assertEquals(0, left.count(), "gc's own environment removed its private dir");
        }

        Airlock.Result up = ssh("up").run();
        assertEquals(2, up.exit(), up::toString); // a usage error: the command does not apply to this backend
        assertOneLine(up, "airlock: ");
        assertTrue(up.err().contains("no sandboxes that outlive a command; up and down work with"), up::err);
    }
}
