package dev.airlock.daytona.emulator;

import dev.airlock.emulator.PortEdge;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The emulator's Daytona preview proxy for one URL: a listener on {@code 127.0.0.1} that reads
 * each connection's first request head, asks its {@link Check} whether the request may pass (the
 * standard URL's {@code x-daytona-preview-token} header, a signed URL's expiry), and then relays
 * the head and everything after it, byte for byte both ways, through the port's {@link PortEdge}
 * into the sandbox. A refused request gets {@code 401} and the connection ends, as the service's
 * proxy refuses a private sandbox's preview without its credential.
 */
final class PreviewFront implements AutoCloseable {
    /** Decides a connection's first request: a refusal's message, or empty to let it through. */
    @FunctionalInterface
    interface Check {
        Optional<String> refuse(Map<String, String> headers);
    }

    private static final int HEAD_MAX = 64 * 1024;
    private static final int HEAD_TIMEOUT_MS = 30_000;

    private final PortEdge edge;
    private final Check check;
    private final ServerSocket listener;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private PreviewFront(PortEdge edge, Check check, ServerSocket listener) {
        this.edge = edge;
        this.check = check;
        this.listener = listener;
    }

    /** Listens on a free port of {@code 127.0.0.1} in front of {@code edge}. */
    static PreviewFront open(PortEdge edge, Check check) throws IOException {
        PreviewFront f = new PreviewFront(edge, check, new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
        Thread t = new Thread(f::acceptLoop, "daytona-emulator-preview-" + f.listener.getLocalPort());
        t.setDaemon(true);
        t.start();
        return f;
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + listener.getLocalPort() + "/");
    }

    private void acceptLoop() {
        while (!closed) {
            Socket s;
            try {
                s = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            sockets.add(s);
            Thread t = new Thread(() -> serve(s), "daytona-emulator-preview-conn");
            t.setDaemon(true);
            t.start();
        }
    }

    private void serve(Socket client) {
        Socket upstream = null;
        try (client) {
            client.setSoTimeout(HEAD_TIMEOUT_MS);
            byte[] head = readHead(client.getInputStream());
            if (head == null) {
                return;
            }
            Optional<String> refusal = check.refuse(headers(head));
            if (refusal.isPresent()) {
                refuse(client.getOutputStream(), refusal.get());
                return;
            }
            client.setSoTimeout(0);
            upstream = new Socket(InetAddress.getLoopbackAddress(), edge.port());
            sockets.add(upstream);
            Socket up = upstream;
            up.getOutputStream().write(head);
            Thread in = new Thread(() -> {
                try {
                    client.getInputStream().transferTo(up.getOutputStream());
                    up.shutdownOutput();
                } catch (IOException e) {
                    // either side went away: the other copy ends too
                }
            }, "daytona-emulator-preview-in");
            in.setDaemon(true);
            in.start();
            up.getInputStream().transferTo(client.getOutputStream());
        } catch (IOException e) {
            // the connection ended
        } finally {
            if (upstream != null) {
                try {
                    upstream.close();
                } catch (IOException ignored) {
                    // closing
                }
                sockets.remove(upstream);
            }
            sockets.remove(client);
        }
    }

    /** The bytes up to and including the blank line that ends the request head; null if the client left first. */
    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (b.size() < HEAD_MAX) {
            int c = in.read();
            if (c < 0) {
                return null;
            }
            b.write(c);
            matched = c == end[matched] ? matched + 1 : (c == '\r' ? 1 : 0);
            if (matched == end.length) {
                return b.toByteArray();
            }
        }
        return null;
    }

    /** Header names in lower case to their values (the first of each). */
    static Map<String, String> headers(byte[] head) {
        Map<String, String> h = new LinkedHashMap<>();
        String[] lines = new String(head, StandardCharsets.ISO_8859_1).split("\r\n");
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                h.putIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
            }
        }
        return h;
    }

    private static void refuse(OutputStream out, String message) throws IOException {
        byte[] body = message.getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + body.length
                + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
    }

    /** Ends the listener and every connection it carries. */
    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        sockets.clear();
    }
}
