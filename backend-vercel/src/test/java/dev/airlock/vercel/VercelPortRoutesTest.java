package dev.airlock.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A sandbox created with {@code ports} answers a route per port ({@code {url, subdomain, port}},
 * the SDK's shape), whose {@code url} (the emulated edge, on loopback) reaches the server and stops
 * answering with the session; a request whose Host is the route's domain (what the SDK's
 * {@code domain(port)} builds from the subdomain) reaches the server listening on
 * that port inside the sandbox, and only there: the host's own loopback port of the same number
 * is never reached.
 */
class VercelPortRoutesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Echoes the request: status 201, the method and path in headers, the body back byte for byte. */
    private static final String ECHO = "require('http').createServer((q, r) => { const c = []; q.on('data', d => c.push(d));"
            + " q.on('end', () => { r.writeHead(201, {'x-method': q.method, 'x-path': q.url, 'content-type': 'application/x-echo'});"
            + " r.end(Buffer.concat(c)); }); }).listen(PORT, '127.0.0.1')";
    static VercelEmulatorFixture fixture;

    @BeforeAll
    static void start() {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @Test
    void aPortsDomainReachesTheServerInTheSandbox() throws Exception {
        Services.requireProgram("node", "nodejs");
        JsonNode made = create("\"ports\":[3000,3001]");
        JsonNode routes = made.path("routes");
        assertEquals(2, routes.size(), made.toString());
        JsonNode route = routes.get(0);
        assertEquals(3000, route.path("port").asInt());
        String sub = route.path("subdomain").asText();
        assertTrue(sub.matches("[a-z0-9-]+"), sub);
        URI edge = URI.create(route.path("url").asText());
        assertEquals("http", edge.getScheme(), "the route's url is the emulated edge on this machine: " + edge);
        assertEquals("127.0.0.1", edge.getHost(), "the route's url is the emulated edge on this machine: " + edge);
        String sid = made.path("session").path("id").asText();
        assertEquals(routes, get("/v2/sandboxes/sessions/" + sid).path("routes"), "session-get answers the same routes");
        String name = made.path("sandbox").path("name").asText();
        assertEquals(routes, get("/v2/sandboxes/" + name).path("routes"), "sandbox-get answers the same routes");

        String host = sub + ".vercel.run";
        Answer before = request(host, "GET", "/", new byte[0]);
        assertEquals(502, before.status, before.text());
        assertTrue(before.text().contains("nothing answered on port 3000 in the sandbox"), before.text());

        post("/v2/sandboxes/sessions/" + sid + "/cmd", "{\"command\":\"node\",\"args\":[\"-e\","
                + JSON.writeValueAsString(ECHO.replace("PORT", "3000")) + "]}");
        byte[] body = new byte[300_000];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) (i * 31);
        }
        Answer a = request(host, "POST", "/echo?a=1&b=%20", body);
        for (int i = 0; i < 100 && a.status == 502; i++) {
            Thread.sleep(100);
            a = request(host, "POST", "/echo?a=1&b=%20", body);
        }
        assertEquals(201, a.status, a.text());
        assertArrayEquals(body, a.body, "the body went in and came back byte for byte");
        assertTrue(a.head.contains("\r\nX-method: POST\r\n") || a.head.toLowerCase().contains("\r\nx-method: post\r\n"), a.head);
        assertTrue(a.head.toLowerCase().contains("\r\nx-path: /echo?a=1&b=%20\r\n"), a.head);
        assertTrue(a.head.toLowerCase().contains("\r\ncontent-type: application/x-echo\r\n"), a.head);
        Answer direct = request(edge, edge.getHost() + ":" + edge.getPort(), "POST", "/direct", body);
        assertEquals(201, direct.status, "the route's url reaches the same server: " + direct.text());
        assertArrayEquals(body, direct.body, "the body went through the route's url and came back byte for byte");

        Answer other = request(routes.get(1).path("subdomain").asText() + ".vercel.run:443", "GET", "/", new byte[0]);
        assertEquals(502, other.status, "port 3001 has its own route, and nothing listens there: " + other.text());

        Answer unknown = request("sb-nosuchroute-3000.vercel.run", "GET", "/", new byte[0]);
        assertEquals(404, unknown.status, unknown.text());

        post("/v2/sandboxes/sessions/" + sid + "/stop", "{}");
        Answer stopped = request(host, "GET", "/", new byte[0]);
        assertEquals(410, stopped.status, stopped.text());
        assertTrue(stopped.text().contains("sandbox_stopped"), stopped.text());
        assertFalse(answers(edge), "the route's url " + edge + " still answers after the session stopped");
    }

    /** Whether anything accepts a connection at {@code u} and answers a request. */
    private static boolean answers(URI u) {
        try {
            return request(u, u.getHost(), "GET", "/", new byte[0]).status > 0;
        } catch (Exception | AssertionError e) {
            return false;
        }
    }

    @Test
    void aRouteNeverReachesTheHostsLoopback() throws Exception {
        try (ServerSocket hostServer = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            int port = hostServer.getLocalPort();
            JsonNode made = create("\"ports\":[" + port + "]");
            String host = made.path("routes").get(0).path("subdomain").asText() + ".vercel.run";
            Answer a = request(host, "GET", "/", new byte[0]);
            assertEquals(502, a.status, a.text());
            hostServer.setSoTimeout(200);
            boolean reached;
            try (Socket s = hostServer.accept()) {
                reached = true;
            } catch (SocketTimeoutException e) {
                reached = false;
            }
            assertTrue(!reached, "the host's port " + port + " was reached through a sandbox's route");
            post("/v2/sandboxes/sessions/" + made.path("session").path("id").asText() + "/stop", "{}");
        }
    }

    @Test
    void badPortsAreRefusedInOneLine() throws Exception {
        assertRefused("\"ports\":[3000,3000]", "port 3000 is listed twice");
        assertRefused("\"ports\":[0]", "ports must be port numbers between 1 and 65535, not 0");
        assertRefused("\"ports\":[\"3000\"]", "ports must be port numbers between 1 and 65535, not \"3000\"");
        assertRefused("\"ports\":3000", "ports must be an array of port numbers");
    }

    private record Answer(int status, String head, byte[] body) {
        String text() {
            return head + new String(body, StandardCharsets.UTF_8);
        }
    }

    /** One HTTP/1.1 request to the emulator with {@code host} as its Host, as a DNS entry for *.vercel.run would send it. */
    private static Answer request(String host, String method, String target, byte[] body) throws Exception {
        return request(fixture.emulator.url(), host, method, target, body);
    }

    /** One HTTP/1.1 request to {@code u}'s address with {@code host} as its Host. */
    private static Answer request(URI u, String host, String method, String target, byte[] body) throws Exception {
        try (Socket s = new Socket(u.getHost(), u.getPort())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write((method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: " + body.length
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            byte[] all = s.getInputStream().readAllBytes();
            int end = indexOf(all, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            String head = new String(all, 0, end + 2, StandardCharsets.ISO_8859_1);
            byte[] rest = Arrays.copyOfRange(all, end + 4, all.length);
            int status = Integer.parseInt(head.split(" ", 3)[1]);
            return new Answer(status, head, head.toLowerCase().contains("transfer-encoding: chunked") ? dechunk(rest) : rest);
        }
    }

    private static byte[] dechunk(byte[] in) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int i = 0;
        while (true) {
            int eol = indexOf(Arrays.copyOfRange(in, i, in.length), "\r\n".getBytes(StandardCharsets.ISO_8859_1)) + i;
            int n = Integer.parseInt(new String(in, i, eol - i, StandardCharsets.ISO_8859_1).split(";")[0].trim(), 16);
            if (n == 0) {
                return out.toByteArray();
            }
            out.write(in, eol + 2, n);
            i = eol + 2 + n + 2;
        }
    }

    private static int indexOf(byte[] a, byte[] b) {
        outer:
        for (int i = 0; i + b.length <= a.length; i++) {
            for (int j = 0; j < b.length; j++) {
                if (a[i + j] != b[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("no end of headers in " + new String(a, StandardCharsets.ISO_8859_1));
    }

    private static JsonNode create(String fields) throws Exception {
        HttpResponse<String> r = send("POST", "/v3/sandboxes", "{\"projectId\":\"prj_ports\"," + fields + "}");
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body());
    }

    private static JsonNode get(String path) throws Exception {
        HttpResponse<String> r = send("GET", path, null);
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body());
    }

    private static JsonNode post(String path, String json) throws Exception {
        HttpResponse<String> r = send("POST", path, json);
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body());
    }

    private static void assertRefused(String fields, String message) throws Exception {
        HttpResponse<String> r = send("POST", "/v3/sandboxes", "{\"projectId\":\"prj_ports\"," + fields + "}");
        assertEquals(400, r.statusCode(), r.body());
        JsonNode error = JSON.readTree(r.body()).path("error");
        assertEquals("bad_request", error.path("code").asText(), r.body());
        assertEquals(message, error.path("message").asText(), r.body());
    }

    private static HttpResponse<String> send(String method, String path, String json) throws Exception {
        URI u = URI.create(fixture.emulator.url() + path + "?teamId=" + VercelEmulatorFixture.TEAM);
        HttpRequest.Builder b = HttpRequest.newBuilder(u).header("Authorization", "Bearer " + VercelEmulatorFixture.TOKEN);
        b = json == null ? b.GET() : b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json));
        return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
