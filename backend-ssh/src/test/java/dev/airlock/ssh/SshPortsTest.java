package dev.airlock.ssh;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.tck.Http;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A port of the SSH host reached through a local forward over the environment's connection: the
 * server's bytes come through a port of this machine that is not the server's own, and closing the
 * port ends the forward while the server itself still answers on its port.
 */
class SshPortsTest {
    @RegisterExtension
    static final SshdExtension SSHD = new SshdExtension();

    @Test
    void aPortIsAForwardThatEndsWhenItIsClosed() throws Exception {
        assumeTrue(new java.io.File("/usr/bin/busybox").canExecute() || new java.io.File("/bin/busybox").canExecute(),
                "no busybox on this machine to serve a port with (busybox httpd)");
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        byte[] served = new byte[50_000];
        new Random(5).nextBytes(served);
        served[0] = 0;
        try (Environment env = Environments.open(SSHD.server().settings())) {
            String dir = env.target().scratchDir() + "/www";
            env.files().mkdirs(dir);
            env.files().write(dir + "/served.bin", served);
            env.start(ExecRequest.of("exec busybox httpd -f -p 127.0.0.1:" + port + " -h " + dir));
            URI url = env.ports().expose(port);
            assertEquals("127.0.0.1", url.getHost(), url.toString());
            assertNotEquals(port, url.getPort(), "the URL is a forward on a port of its own, not the server's: " + url);
            assertArrayEquals(served, Http.fetch(url.resolve("/served.bin"), Duration.ofSeconds(10)), "the bytes through the forward " + url);
            assertEquals(Map.of(port, url), env.ports().list());

            env.ports().close(port);
            assertFalse(Http.answers(url.resolve("/served.bin")), url + " answers after close(" + port + ")");
            assertArrayEquals(served, Http.fetch(URI.create("http://127.0.0.1:" + port + "/served.bin"), Duration.ofSeconds(10)),
                    "the server itself still answers on its port: only the forward ended");

            ConfigurationException e = assertThrows(ConfigurationException.class, () -> env.ports().expose(70000));
            assertEquals("port 70000 is not a TCP port; use a port from 1 to 65535", e.getMessage());
        }
    }

    /**
     * A client that asks a port for a large answer and does not read it holds only its own
     * channel: the environment's commands, on the same SSH connection, still run (a blocking pipe
     * under the channel stalled every channel of the connection until the connect timeout).
     */
    @Test
    void aClientThatDoesNotReadStallsNoCommand() throws Exception {
        assumeTrue(new java.io.File("/usr/bin/busybox").canExecute() || new java.io.File("/bin/busybox").canExecute(),
                "no busybox on this machine to serve a port with (busybox httpd)");
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        try (Environment env = Environments.open(SSHD.server().settings("airlock.ssh.connect-timeout", "60s"))) {
            String dir = env.target().scratchDir() + "/www-big";
            env.files().mkdirs(dir);
            env.exec(ExecRequest.of("head -c 16777216 /dev/zero > " + dir + "/big.bin; printf ready > " + dir + "/ready.txt"));
            env.start(ExecRequest.of("exec busybox httpd -f -p 127.0.0.1:" + port + " -h " + dir));
            URI url = env.ports().expose(port);
            assertArrayEquals("ready".getBytes(StandardCharsets.US_ASCII), Http.fetch(url.resolve("/ready.txt"), Duration.ofSeconds(10)));
            try (java.net.Socket stalled = new java.net.Socket(url.getHost(), url.getPort())) {
                stalled.getOutputStream().write(("GET /big.bin HTTP/1.0\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                stalled.getOutputStream().flush();
                Thread.sleep(1000); // the answer flows in, and nobody reads it
                java.util.Optional<dev.airlock.ExecResult> r = env.start(ExecRequest.of("echo still-runs")).await(Duration.ofSeconds(30));
                assertTrue(r.isPresent(), "a command waited on a port client that does not read");
                assertEquals("still-runs\n", r.get().stdout().text());
            }
        }
    }
}
