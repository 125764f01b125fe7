package dev.airlock.emulator;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** A service's edge on loopback: a server in the sandbox's own network answers through it, byte for byte, until it closes. */
class PortEdgeTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private EmulatedSandbox sandbox() {
        return EmulatedSandbox.create("sb-edge", "debian:12", dir.resolve("sb-edge"), "/root", Services.any(), new CallJournal());
    }

    /** Starts {@code script} in the background of {@code sb}; it ends when the sandbox stops. */
    private static void background(EmulatedSandbox sb, String script) throws IOException {
        SandboxProcess p = sb.exec(EmulatedSandbox.Command.shell("exec", script, "/", Map.of(), UUID.randomUUID().toString()));
        p.stdin().close();
    }

    private static byte[] randomBytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        b[0] = 0;
        b[1] = (byte) 0xff;
        return b;
    }

    /** Sends {@code payload} through a new connection to the edge and reads as many bytes back (an echo server's answer). */
    private static byte[] echo(PortEdge edge, byte[] payload) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(edge.host(), edge.port()), 5_000);
            s.setSoTimeout((int) WAIT.toMillis());
            CompletableFuture<Void> send = CompletableFuture.runAsync(() -> {
                try {
                    s.getOutputStream().write(payload);
                    s.getOutputStream().flush();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            byte[] got = s.getInputStream().readNBytes(payload.length);
            try {
                send.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IOException("sending through the edge failed (nothing listening yet?)", e.getCause());
            }
            return got;
        }
    }

    /** Waits until a server listens behind {@code edge}: a connection that is not reset at once. */
    private static void awaitServer(PortEdge edge) throws Exception {
        long end = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < end) {
            try {
                if (echo(edge, new byte[] {'.'}).length == 1) {
                    return;
                }
            } catch (IOException e) {
                // reset: nothing listens yet
            }
            Thread.sleep(100);
        }
        fail("no server answered behind " + edge + " within " + WAIT);
    }

    @Test
    void anHttpServerInTheSandboxAnswersThroughTheEdgeWithTheBytesItServed() throws Exception {
        byte[] served = randomBytes(300_000, 7);
        try (EmulatedSandbox sb = sandbox()) {
            sb.mkdirs("/srv", 0755);
            sb.write("/srv/data.bin", new ByteArrayInputStream(served), 0644);
            background(sb, "exec busybox httpd -f -p 8080 -h /srv");
            try (PortEdge edge = PortEdge.open(sb, 8080)) {
                assertEquals(URI.create("http://127.0.0.1:" + edge.port() + "/"), edge.url());
                HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
                HttpRequest get = HttpRequest.newBuilder(edge.url().resolve("/data.bin")).timeout(WAIT).build();
                long end = System.nanoTime() + WAIT.toNanos();
                HttpResponse<byte[]> r = null;
                while (r == null && System.nanoTime() < end) {
                    try {
                        r = http.send(get, HttpResponse.BodyHandlers.ofByteArray());
                    } catch (IOException e) {
                        Thread.sleep(100); // httpd not listening yet: the edge resets
                    }
                }
                assertTrue(r != null, "httpd never answered through " + edge);
                assertEquals(200, r.statusCode());
                assertArrayEquals(served, r.body(), "the bytes through the edge must be the bytes served");
            }
        }
    }

    @Test
    void bytesSentThroughTheEdgeReachTheServerExactly() throws Exception {
        byte[] payload = randomBytes(1 << 20, 11);
        try (EmulatedSandbox sb = sandbox()) {
            background(sb, "exec busybox nc -ll -p 8081 -e /bin/cat");
            try (PortEdge edge = PortEdge.open(sb, 8081)) {
                awaitServer(edge);
                assertArrayEquals(payload, echo(edge, payload), "an echo server must send back the very bytes sent");
            }
        }
    }

    @Test
    void aPortNothingListensOnEndsTheConnectionWithNoBytes() throws Exception {
        try (EmulatedSandbox sb = sandbox(); PortEdge edge = PortEdge.open(sb, 8082); Socket s = new Socket()) {
            s.connect(new InetSocketAddress(edge.host(), edge.port()), 5_000);
            s.setSoTimeout((int) WAIT.toMillis());
            try {
                assertEquals(-1, s.getInputStream().read(), "nothing listens on 8082: no byte may come");
            } catch (IOException e) {
                // reset, as a refused connect: what is meant
            }
        }
    }

    /** The command lines of the sandbox's live processes, read from the host's /proc. */
    private static java.util.List<String> commandLines(EmulatedSandbox sb) {
        java.util.List<String> lines = new java.util.ArrayList<>();
        for (long pid : sb.livePids()) {
            try {
                lines.add(new String(java.nio.file.Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
                        java.nio.charset.StandardCharsets.UTF_8).replace('\0', ' ').trim());
            } catch (IOException e) {
                // ended meanwhile
            }
        }
        return lines;
    }

    /** Whether only the server ({@code busybox ...}) and the processes of its connections are left: no relay. */
    private static boolean noRelay(EmulatedSandbox sb) {
        return commandLines(sb).stream().noneMatch(c -> c.contains(" relay ") || c.equals("cat"));
    }

    @Test
    void closingTheEdgeEndsItsListenerItsConnectionsAndTheirRelays() throws Exception {
        try (EmulatedSandbox sb = sandbox()) {
            background(sb, "exec busybox nc -ll -p 8083 -e /bin/cat");
            PortEdge edge = PortEdge.open(sb, 8083);
            awaitServer(edge);
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(edge.host(), edge.port()), 5_000);
                s.setSoTimeout((int) WAIT.toMillis());
                OutputStream out = s.getOutputStream();
                out.write('x');
                out.flush();
                InputStream in = s.getInputStream();
                assertEquals('x', in.read(), "the echo through an open connection");
                assertTrue(!noRelay(sb), "a relay runs in the sandbox while the connection is open: " + commandLines(sb));
                edge.close();
                try {
                    assertEquals(-1, in.read(), "the connection must end when its edge closes");
                } catch (IOException e) {
                    // reset: ended too
                }
            }
            assertTrue(dev.airlock.tck.Loopback.nothingListens(edge.host(), edge.port()), "a closed edge must not take connections");
            long end = System.nanoTime() + WAIT.toNanos();
            while (!noRelay(sb) && System.nanoTime() < end) {
                Thread.sleep(50);
            }
            assertTrue(noRelay(sb), "every relay must end with its edge: " + commandLines(sb));
        }
    }

    @Test
    void aStoppedSandboxsEdgesTakeNoConnectionAndNoNewEdgeOpens() throws Exception {
        try (EmulatedSandbox sb = sandbox()) {
            PortEdge edge = PortEdge.open(sb, 8084);
            sb.stop();
            assertTrue(dev.airlock.tck.Loopback.nothingListens(edge.host(), edge.port()),
                    "the edge of a stopped sandbox must not take connections");
            assertThrows(IllegalStateException.class, () -> PortEdge.open(sb, 8085));
        }
    }

    /** A gate (the service's proxy: a token, an expiry) decides before anything reaches the sandbox, and passes on what it read. */
    @Test
    void aGatedEdgeLetsThroughOnlyWhatItsGateAdmitsWithTheBytesTheGateRead() throws Exception {
        PortEdge.Gate fourBytesPass = (in, out) -> {
            byte[] word = in.readNBytes(4);
            if (java.util.Arrays.equals(word, "PASS".getBytes())) {
                return java.util.Optional.of(word);
            }
            out.write("NO\n".getBytes());
            return java.util.Optional.empty();
        };
        try (EmulatedSandbox sb = sandbox()) {
            background(sb, "exec busybox nc -ll -p 8086 -e /bin/cat");
            try (PortEdge edge = PortEdge.open(sb, 8086, fourBytesPass)) {
                byte[] payload = randomBytes(100_000, 13);
                byte[] sent = new byte[4 + payload.length];
                System.arraycopy("PASS".getBytes(), 0, sent, 0, 4);
                System.arraycopy(payload, 0, sent, 4, payload.length);
                long end = System.nanoTime() + WAIT.toNanos();
                byte[] got = null;
                while (got == null && System.nanoTime() < end) {
                    try {
                        got = echo(edge, sent);
                    } catch (IOException e) {
                        // reset: nc not listening yet
                    }
                    if (got == null || got.length == 0) {
                        got = null; // nothing listened yet: the connection ended with no byte
                        Thread.sleep(100);
                    }
                }
                assertArrayEquals(sent, got, "the gate's bytes, then the client's, reach the server in order");
                try (Socket s = new Socket(edge.host(), edge.port())) {
                    s.setSoTimeout((int) WAIT.toMillis());
                    s.getOutputStream().write("FAIL and more".getBytes());
                    assertArrayEquals("NO\n".getBytes(), s.getInputStream().readAllBytes(),
                            "a refused connection gets the gate's answer and nothing from the server");
                }
            }
        }
    }
}
