package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.Services;
import dev.airlock.tck.Http;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Local ports: the command's own port on this host's loopback under bubblewrap with the network on;
 * with the network off, a network of the environment's own that all its commands share, and a
 * forward from the host's loopback into it, both gone when the environment closes.
 */
class LocalPortsTest {
    private static final Settings BWRAP = Settings.of("airlock.container", "no", "airlock.local.isolation", "bwrap",
            "airlock.local.workdir", "none");

    @Test
    void underBubblewrapTheUrlIsTheCommandsOwnPort() throws Exception {
        Services.require(dev.airlock.spi.HostPrograms.onPath("bwrap").isPresent(), "bubblewrap is not installed (apt-get install bubblewrap)");
        Services.require(dev.airlock.spi.HostPrograms.onPath("busybox").isPresent(), "busybox is not installed (its httpd serves the port)");
        int port = freePort();
        try (Environment env = new LocalProvider().open(OpenContext.of(BWRAP))) {
            String dir = env.target().scratchDir() + "/www";
            env.files().mkdirs(dir);
            env.files().write(dir + "/hello.txt", "hello\0from the sandbox".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            env.start(ExecRequest.of("exec busybox httpd -f -p 127.0.0.1:" + port + " -h " + dir));
            URI url = env.ports().expose(port);
            assertEquals(URI.create("http://127.0.0.1:" + port + "/"), url);
            assertEquals("hello\0from the sandbox", new String(Http.fetch(url.resolve("/hello.txt"), Duration.ofSeconds(10)), java.nio.charset.StandardCharsets.UTF_8));
        }
    }

    /** A server one exec starts in the environment's own network: busybox httpd on port 8080 of it, serving {@code bytes}. */
    private static void serve(Environment env, byte[] bytes) {
        String dir = env.target().scratchDir() + "/www";
        env.files().mkdirs(dir);
        env.files().write(dir + "/served.bin", bytes);
        env.start(ExecRequest.of("exec busybox httpd -f -p 127.0.0.1:8080 -h " + dir));
    }

    /** 300 KB no text transform keeps: NUL, invalid UTF-8, CR LF. */
    private static byte[] served() {
        byte[] b = new byte[300 * 1024];
        new java.util.Random(37).nextBytes(b);
        b[0] = 0;
        b[1] = (byte) 0xff;
        b[2] = '\r';
        b[3] = '\n';
        return b;
    }

    private static Environment openOffline() {
        Services.require(dev.airlock.spi.HostPrograms.onPath("bwrap").isPresent(), "bubblewrap is not installed (apt-get install bubblewrap)");
        Services.require(dev.airlock.spi.HostPrograms.onPath("busybox").isPresent(), "busybox is not installed (its httpd serves the port)");
        return new LocalProvider().open(OpenContext.of(BWRAP.with("airlock.network", "off")));
    }

    /** A client in the sandbox: waits for the server to listen, then prints what it serves. */
    private static final String CLIENT = "until busybox wget -q -O /dev/null http://127.0.0.1:8080/served.bin 2>/dev/null;"
            + " do sleep 0.1; done; exec busybox wget -q -O - http://127.0.0.1:8080/served.bin";

    @Test
    void withTheNetworkOffAServerOfOneExecAnswersTheNextExecAndTheHostWithItsBytes() throws Exception {
        byte[] served = served();
        try (Environment env = openOffline()) {
            serve(env, served);
            ExecResult next = env.exec(ExecRequest.builder(CLIENT).timeout(Duration.ofSeconds(60)).build());
            assertEquals(0, next.exitCode(), next.stderr().text());
            assertArrayEquals(served, next.stdout().bytes(), "the next exec must read the bytes served (" + next.stdout().size() + " came)");
            URI url = env.ports().expose(8080);
            assertEquals("127.0.0.1", url.getHost());
            assertNotEquals(8080, url.getPort(), "port 8080 is the sandbox's own, not the host's");
            assertArrayEquals(served, Http.fetch(url.resolve("/served.bin"), Duration.ofSeconds(30)),
                    "the host must read through " + url + " the bytes served");
            assertEquals(Map.of(8080, url), env.ports().list());
        }
    }

    @Test
    void withTheNetworkOffAPortNothingListensOnResetsAndNeverReachesTheHostsOwnPort() throws Exception {
        try (ServerSocket host = hostServer(); Environment env = openOffline()) {
            int port = host.getLocalPort(); // the host listens on it; the sandbox's network does not
            URI url = env.ports().expose(port);
            try (Socket client = new Socket(url.getHost(), url.getPort())) {
                client.getOutputStream().write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                byte[] got;
                try {
                    got = client.getInputStream().readAllBytes();
                } catch (SocketException reset) {
                    assertTrue(String.valueOf(reset.getMessage()).contains("reset"), reset.toString());
                    return;
                }
                fail("a port nothing listens on in the sandbox must reset the connection; it sent " + got.length + " bytes: "
                        + new String(got, StandardCharsets.UTF_8).strip());
            }
        }
    }

    @Test
    void afterCloseNothingOfTheEnvironmentsNetworkRunsAndTheUrlRefuses() throws Exception {
        URI url;
        String net;
        Socket held;
        try (Environment env = openOffline()) {
            serve(env, served());
            net = env.exec(ExecRequest.of("readlink /proc/self/ns/net")).stdout().text().strip();
            assertTrue(net.startsWith("net:["), net);
            assertNotEquals(Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString(), net, "the sandbox is in the host's network");
            url = env.ports().expose(8080);
            Http.fetch(url.resolve("/served.bin"), Duration.ofSeconds(30));
            // A connection held open, its request unfinished: its relay is running when the environment closes.
            held = new Socket(url.getHost(), url.getPort());
            held.getOutputStream().write("GET /served.bin HTTP/1.0\r\n".getBytes(StandardCharsets.US_ASCII));
            while (inNetwork(net).stream().noneMatch(pid -> comm(pid).equals("bash"))) {
                Thread.sleep(50); // the relay (bash) starts as the connection is accepted
            }
            assertTrue(inNetwork(net).size() >= 3, "the anchor, the server and the relay: " + inNetwork(net));
        }
        assertEquals(List.of(), inNetwork(net), "processes still in the closed environment's network " + net);
        assertEquals(List.of(), heldByThisJvm(net), "descriptors of this JVM still hold the network " + net);
        try (Socket s = held) {
            s.setSoTimeout(30_000);
            assertEquals(-1, readOrReset(s), "the held connection must end with the environment");
        }
        assertTrue(dev.airlock.tck.Loopback.nothingListens(url.getHost(), url.getPort()), url + " still accepts connections after close");
    }

    @Test
    void closingAPortEndsItsListenerConnectionsAndRelaysWhileTheServerStays() throws Exception {
        byte[] served = served();
        try (Environment env = openOffline()) {
            serve(env, served);
            String net = env.exec(ExecRequest.of("readlink /proc/self/ns/net")).stdout().text().strip();
            List<Long> before = inNetwork(net); // the anchor and the server
            URI url = env.ports().expose(8080);
            Http.fetch(url.resolve("/served.bin"), Duration.ofSeconds(30));
            try (Socket held = new Socket(url.getHost(), url.getPort())) {
                held.getOutputStream().write("GET /served.bin HTTP/1.0\r\n".getBytes(StandardCharsets.US_ASCII));
                while (relays(net, before).stream().noneMatch(p -> p.endsWith(" bash"))) {
                    Thread.sleep(50); // the relay starts as the connection is accepted
                }
                env.ports().close(8080);
                held.setSoTimeout(30_000);
                assertEquals(-1, readOrReset(held), "the held connection must end with its port");
            }
            assertEquals(List.of(), relays(net, before), "relay processes (bash, cat) still running after close(8080)");
            assertTrue(dev.airlock.tck.Loopback.nothingListens(url.getHost(), url.getPort()),
                    url + " still accepts connections after close(8080)");
            ExecResult next = env.exec(ExecRequest.builder(CLIENT).timeout(Duration.ofSeconds(60)).build());
            assertArrayEquals(served, next.stdout().bytes(), "the server must still answer inside: " + next.stderr().text());
        }
    }

    /**
     * The processes in network {@code net} that were not there {@code before} the port was
     * exposed and are a relay's (bash, cat), with their names; not the server's own per-connection children.
     */
    private static List<String> relays(String net, List<Long> before) throws IOException {
        return inNetwork(net).stream().filter(pid -> !before.contains(pid)).map(pid -> pid + " " + comm(pid))
                .filter(p -> p.endsWith(" bash") || p.endsWith(" cat")).toList();
    }

    @Test
    void withTheNetworkOffCommandsReachNeitherTheHostsLoopbackNorAnotherEnvironment() throws Exception {
        try (ServerSocket host = hostServer(); Environment env = openOffline(); Environment other = openOffline()) {
            serve(other, served());
            other.exec(ExecRequest.builder(CLIENT + " >/dev/null").timeout(Duration.ofSeconds(60)).build()); // it listens
            String hostPort = said(env, "bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + host.getLocalPort() + " && head -c 64 <&3'");
            assertFalse(hostPort.contains(REACHED), "a command reached the host's loopback: " + hostPort);
            assertTrue(hostPort.contains("Connection refused"), "the host's port must be refused: " + hostPort);
            String otherPort = said(env, "busybox wget -q -O - http://127.0.0.1:8080/served.bin");
            assertTrue(otherPort.contains("refused"), "the other environment's server must be out of reach: " + otherPort);
            String elsewhere = said(env, "bash -c 'exec 3<>/dev/tcp/203.0.113.1/80'");
            assertTrue(elsewhere.contains("Network is unreachable"), "no route must lead anywhere: " + elsewhere);
            assertEquals("", said(env, "ip route"), "the only route is the loopback's (in the local table)");
        }
    }

    /** What a command prints on stdout and stderr, with its exit code when not 0. */
    private static String said(Environment env, String script) {
        ExecResult r = env.exec(ExecRequest.builder(script).timeout(Duration.ofSeconds(60)).build());
        return r.stdout().text() + r.stderr().text() + (r.exitCode() == 0 ? "" : "[exit " + r.exitCode() + "]");
    }

    private static final String REACHED = "airlock-host-reached";

    /** A server on the host's loopback that sends {@link #REACHED} to whoever connects. */
    private static ServerSocket hostServer() throws IOException {
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket c = server.accept()) {
                    c.getOutputStream().write((REACHED + "\n").getBytes(StandardCharsets.UTF_8));
                } catch (IOException e) {
                    // closed
                }
            }
        }, "airlock-test-host-server");
        t.setDaemon(true);
        t.start();
        return server;
    }

    /** The host's processes in network namespace {@code net} ({@code net:[N]}), by their /proc entries. */
    private static List<Long> inNetwork(String net) throws IOException {
        List<Long> out = new ArrayList<>();
        try (Stream<Path> all = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) all::iterator) {
                if (p.getFileName().toString().matches("\\d+")) {
                    try {
                        if (Files.readSymbolicLink(p.resolve("ns/net")).toString().equals(net)) {
                            out.add(Long.parseLong(p.getFileName().toString()));
                        }
                    } catch (IOException e) {
                        // gone meanwhile, or not ours to read
                    }
                }
            }
        }
        return out;
    }

    private static List<String> heldByThisJvm(String net) throws IOException {
        List<String> out = new ArrayList<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    if (Files.readSymbolicLink(fd).toString().equals(net)) {
                        out.add(fd.toString());
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        }
        return out;
    }

    private static String comm(long pid) {
        try {
            return Files.readString(Path.of("/proc", Long.toString(pid), "comm")).strip();
        } catch (IOException e) {
            return "";
        }
    }

    /** What a read of an ended connection gives: -1 for its end, or for a reset. */
    private static int readOrReset(Socket s) throws IOException {
        try {
            int n;
            while ((n = s.getInputStream().read()) >= 0) {
                // the server may have answered part before the end; the end is what counts
            }
            return n;
        } catch (SocketException e) {
            return -1;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

}
