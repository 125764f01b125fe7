package dev.airlock.ssh;

import dev.airlock.BackendException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.tck.Http;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The TCP connection cut under a running command, through a loopback proxy the test controls. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SshConnectionLossTest {
    private SshdServer server;
    private TcpProxy proxy;
    private Environment env;

    @BeforeAll
    void start() throws Exception {
        server = SshdServer.start();
        proxy = new TcpProxy(server.port);
        Path knownHosts = server.dir.resolve("known_hosts_proxy");
        String[] host = Files.readString(server.dir.resolve("ssh_host_ed25519_key.pub")).trim().split(" ");
        Files.writeString(knownHosts, "[127.0.0.1]:" + proxy.port() + " " + host[0] + " " + host[1] + "\n");
        env = Environments.open(server.settings(SshSettings.PORT, Integer.toString(proxy.port()),
                SshSettings.KNOWN_HOSTS, knownHosts.toString()));
    }

    @AfterAll
    void stop() throws Exception {
        if (env != null) {
            env.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /**
     * A cut mid-exec: the caller gets one line (never a re-run), and the command's process group,
     * grandchildren included, is killed over a fresh connection (plain ssh would leave it running:
     * no terminal, no SIGHUP) after the group was checked to still be the launched one. The cut
     * comes right after the command started, so about one run in three it lands before the launcher
     * record (which names the group) reached the client: the group is then found by the exec's nonce.
     */
    @Test
    void aCutMidExecIsReportedNeverRerunAndItsProcessTreeIsKilled() throws Exception {
        Path runs = server.dir.resolve("runs.log");
        Path pgid = server.dir.resolve("cut.pgid");
        Path child = server.dir.resolve("cut.child");
        Execution e = env.start(ExecRequest.of("echo $$ > " + pgid + "; echo run >> " + runs
                + "; sleep 120 & echo $! > " + child + "; wait"));
        long group = SshExecTest.awaitPid(pgid);
        long grandchild = SshExecTest.awaitPid(child);
        try {
            proxy.cutAll();
            BackendException lost = assertThrows(BackendException.class, () -> {
                Optional<ExecResult> r = e.await(Duration.ofSeconds(60));
                throw new AssertionError("no error after the cut: " + r);
            });
            // It names the host, not the backend ("the connection to ssh was lost").
            assertTrue(lost.getMessage().startsWith("the connection to " + SshBackend.of(env).destination() + " was lost"),
                    lost.getMessage());
            assertTrue(lost.getMessage().contains("not run again"), lost.getMessage());
            assertFalse(lost.getMessage().contains("\n"));
            assertTrue(SshExecTest.gone(group), "the command's shell " + group + " outlived the lost connection");
            assertTrue(SshExecTest.gone(grandchild), "its child " + grandchild + " outlived the lost connection");

            ExecResult next = env.exec(ExecRequest.of("echo again"));
            assertEquals(0, next.exitCode(), next.stderr().text());
            assertEquals("again\n", next.stdout().text());
            assertEquals("run\n", Files.readString(runs), "the interrupted command ran again");
        } finally {
            new ProcessBuilder("kill", "-KILL", "--", "-" + group).start().waitFor();
        }
    }

    /**
     * An exposed port's URL outlives the login it was first served over: after the cut, the same
     * URL (the one {@code list()} still names) carries the server's bytes over a new login.
     */
    @Test
    void aPortsUrlKeepsWorkingAfterItsConnectionWasCut() throws Exception {
        assumeTrue(new java.io.File("/usr/bin/busybox").canExecute() || new java.io.File("/bin/busybox").canExecute(),
                "no busybox on this machine to serve a port with (busybox httpd)");
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String dir = env.target().scratchDir() + "/www-cut";
        env.files().mkdirs(dir);
        byte[] served = "served\0across a cut\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        env.files().write(dir + "/f.bin", served);
        // setsid: the server is in a session of its own, so it outlives its exec (and the cut).
        String pid = env.exec(ExecRequest.of("setsid busybox httpd -f -p 127.0.0.1:" + port + " -h " + dir
                + " </dev/null >/dev/null 2>&1 & echo $!")).stdout().text().strip();
        try {
            java.net.URI url = env.ports().expose(port);
            assertArrayEquals(served, Http.fetch(url.resolve("/f.bin"), Duration.ofSeconds(10)), "before the cut");
            proxy.cutAll();
            assertEquals(java.util.Map.of(port, url), env.ports().list());
            assertArrayEquals(served, Http.fetch(url.resolve("/f.bin"), Duration.ofSeconds(20)),
                    "the same URL after the login it ran on was cut");
            env.ports().close(port);
            assertFalse(Http.answers(url.resolve("/f.bin")), url + " answers after close(" + port + ")");
        } finally {
            env.exec(ExecRequest.of("kill " + pid));
        }
    }

    @Test
    void anIdleConnectionThatDroppedIsReplacedForTheNextExec() {
        assertEquals("1\n", env.exec(ExecRequest.of("echo 1")).stdout().text());
        proxy.cutAll();
        ExecResult r = env.exec(ExecRequest.of("echo 2"));
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertEquals("2\n", r.stdout().text());
    }
}
