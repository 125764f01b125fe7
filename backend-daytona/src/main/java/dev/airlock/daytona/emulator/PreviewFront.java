package dev.airlock.daytona.emulator;

import dev.airlock.emulator.PortEdge;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The emulator's Daytona preview proxy for one URL, as the {@link PortEdge.Gate} of that URL's
 * edge: it reads each connection's first request head, asks its {@link Check} whether the request
 * may pass (the standard URL's {@code x-daytona-preview-token} header, a signed URL's expiry), and
 * then lets the head and everything after it through to the sandbox, byte for byte. A refused
 * request gets {@code 401} and the connection ends, as the service's proxy refuses a private
 * sandbox's preview without its credential. The gated edge is the only way to the port.
 */
final class PreviewFront {
    /** Decides a connection's first request: a refusal's message, or empty to let it through. */
    @FunctionalInterface
    interface Check {
        Optional<String> refuse(Map<String, String> headers);
    }

    private static final int HEAD_MAX = 64 * 1024;

    private PreviewFront() {
    }

    /** The gate that lets a connection through when {@code check} admits its first request head. */
    static PortEdge.Gate gate(Check check) {
        return (fromClient, toClient) -> {
            byte[] head = readHead(fromClient);
            if (head == null) {
                return Optional.empty(); // the client left, or sent no request head
            }
            Optional<String> refusal = check.refuse(headers(head));
            if (refusal.isPresent()) {
                refuse(toClient, refusal.get());
                return Optional.empty();
            }
            return Optional.of(head);
        };
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
}
