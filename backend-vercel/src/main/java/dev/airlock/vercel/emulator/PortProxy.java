package dev.airlock.vercel.emulator;

import dev.airlock.emulator.EmulatorHttpServer.Request;
import dev.airlock.emulator.EmulatorHttpServer.Response;
import dev.airlock.emulator.PortEdge;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One HTTP request to a sandbox's public port domain ({@code https://SUBDOMAIN.vercel.run} on the
 * service, what the SDK's {@code domain(port)} builds from the route's subdomain), forwarded to
 * that port through the session's {@link PortEdge} (the one relay into the sandbox's loopback, the
 * route's {@code url} too) and answered with what the server there sends.
 */
final class PortProxy {
    /** The service's domain for sandbox ports. */
    static final String DOMAIN = "vercel.run";
    /** The largest request body forwarded (the emulator's bound, not the service's). */
    static final int MAX_REQUEST_BYTES = 16 * 1024 * 1024;
    private static final int MAX_HEAD_BYTES = 64 * 1024;
    /** The longest a request may take, as the edge's own timeout would end it. */
    static final long MAX_REQUEST_MINUTES = 5;
    /** Hop-by-hop headers (RFC 9110 7.6.1), never forwarded, and the lengths this proxy sets itself. */
    private static final Set<String> HOP = Set.of("connection", "keep-alive", "proxy-connection", "proxy-authenticate",
            "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "content-length");

    private PortProxy() {
    }

    /** Forwards {@code req} through {@code edge} to its port in the sandbox, and answers with the result. */
    static void forward(PortEdge edge, Request req, Response resp) throws IOException {
        int port = edge.sandboxPort();
        byte[] body = req.bodyBytes(MAX_REQUEST_BYTES + 1);
        if (body.length > MAX_REQUEST_BYTES) {
            resp.error(413, "payload_too_large", "the request body is over " + MAX_REQUEST_BYTES + " bytes");
            return;
        }
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), edge.port())) {
            socket.setSoTimeout((int) TimeUnit.MINUTES.toMillis(MAX_REQUEST_MINUTES));
            InputStream down = socket.getInputStream();
            String status;
            try {
                OutputStream up = socket.getOutputStream();
                up.write(head(req, body.length));
                up.write(body);
                up.flush();
                status = line(down);
            } catch (SocketException e) {
                status = null; // the edge resets a connection to a port nothing listens on
            }
            if (status == null) {
                resp.error(502, "bad_gateway", "nothing answered on port " + port + " in the sandbox (nothing listens"
                        + " there, or the server closed the connection without an answer)");
                return;
            }
            String[] parts = status.split(" ", 3);
            int code;
            try {
                code = parts.length >= 2 && parts[0].startsWith("HTTP/") ? Integer.parseInt(parts[1]) : -1;
            } catch (NumberFormatException e) {
                code = -1;
            }
            if (code < 100 || code > 599) {
                resp.error(502, "bad_gateway", "the server on port " + port + " did not answer HTTP");
                return;
            }
            Map<String, String> headers = new LinkedHashMap<>();
            String contentType = null;
            boolean chunked = false;
            long length = -1;
            for (String h = line(down); h != null && !h.isEmpty(); h = line(down)) {
                int colon = h.indexOf(':');
                if (colon <= 0) {
                    continue;
                }
                String name = h.substring(0, colon).trim();
                String value = h.substring(colon + 1).trim();
                String lower = name.toLowerCase(Locale.ROOT);
                if (lower.equals("transfer-encoding")) {
                    chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                } else if (lower.equals("content-length")) {
                    length = Long.parseLong(value);
                } else if (lower.equals("content-type")) {
                    contentType = value;
                } else if (!HOP.contains(lower)) {
                    resp.header(name, value);
                }
            }
            if (req.method().equals("HEAD") || code == 204 || code == 304) {
                resp.empty(code);
                return;
            }
            try (OutputStream out = resp.stream(code, contentType)) {
                if (chunked) {
                    dechunk(down, out);
                } else if (length >= 0) {
                    copy(down, out, length);
                } else {
                    down.transferTo(out);
                }
            }
        }
    }

    /** The request line and headers as the server gets them: the client's, with {@code Connection: close}. */
    private static byte[] head(Request req, int length) {
        StringBuilder b = new StringBuilder();
        b.append(req.method()).append(' ').append(req.target()).append(" HTTP/1.1\r\n");
        req.headers().forEach((name, values) -> {
            if (!HOP.contains(name.toLowerCase(Locale.ROOT))) {
                values.forEach(v -> b.append(name).append(": ").append(v).append("\r\n"));
            }
        });
        if (length > 0 || !List.of("GET", "HEAD", "DELETE", "OPTIONS").contains(req.method())) {
            b.append("Content-Length: ").append(length).append("\r\n");
        }
        b.append("Connection: close\r\n\r\n");
        return b.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** One CRLF- (or LF-) terminated line without its end; null at EOF before any byte. */
    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            if (b.size() >= MAX_HEAD_BYTES) {
                throw new IOException("a header line of the sandbox's server is over " + MAX_HEAD_BYTES + " bytes");
            }
            b.write(c);
        }
        if (c < 0 && b.size() == 0) {
            return null;
        }
        String s = b.toString(StandardCharsets.ISO_8859_1);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
    }

    private static void copy(InputStream in, OutputStream out, long n) throws IOException {
        byte[] buf = new byte[64 * 1024];
        while (n > 0) {
            int r = in.read(buf, 0, (int) Math.min(buf.length, n));
            if (r < 0) {
                throw new IOException("the sandbox's server ended its answer " + n + " bytes short");
            }
            out.write(buf, 0, r);
            n -= r;
        }
    }

    private static void dechunk(InputStream in, OutputStream out) throws IOException {
        while (true) {
            String size = line(in);
            if (size == null) {
                throw new IOException("the sandbox's server ended a chunked answer early");
            }
            int semi = size.indexOf(';');
            long n = Long.parseLong((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
            if (n == 0) {
                return; // trailers are not forwarded
            }
            copy(in, out, n);
            line(in);
        }
    }
}
