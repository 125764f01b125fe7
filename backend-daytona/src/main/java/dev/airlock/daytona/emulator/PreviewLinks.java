package dev.airlock.daytona.emulator;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.airlock.emulator.EmulatedSandbox;
import dev.airlock.emulator.PortEdge;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * The emulator's preview links, as the service gives them: per sandbox port a standard URL whose
 * proxy wants the sandbox's preview token in {@code x-daytona-preview-token} (unless the sandbox
 * is public), and signed URLs that need no header, each until its expiry or its revocation. Every
 * URL is a {@link PortEdge} of its own, gated by a {@link PreviewFront}; all end with the sandbox.
 */
final class PreviewLinks {
    static final String TOKEN_HEADER = "x-daytona-preview-token";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final char[] ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, Links> bySandbox = new ConcurrentHashMap<>();

    /** One sandbox's links: its standard token (new at each start), edges and fronts. */
    private static final class Links {
        final String token = randomToken(32);
        final Map<Integer, PortEdge> standard = new ConcurrentHashMap<>();
        final Map<String, Signed> signed = new ConcurrentHashMap<>();
        boolean closed;
    }

    private static final class Signed {
        final int port;
        final Instant expires;
        final PortEdge front;
        volatile boolean revoked;

        Signed(int port, Instant expires, PortEdge front) {
            this.port = port;
            this.expires = expires;
            this.front = front;
        }
    }

    /** {@code {sandboxId, url, token}}: the port's standard preview URL and the sandbox's token. */
    ObjectNode standard(String sandboxId, EmulatedSandbox sandbox, int port, BooleanSupplier isPublic) throws IOException {
        Links l = links(sandboxId);
        synchronized (l) {
            ensureOpen(l, sandboxId);
            PortEdge f = l.standard.get(port);
            if (f == null) {
                f = PortEdge.open(sandbox, port, PreviewFront.gate(headers -> {
                    String got = headers.getOrDefault(TOKEN_HEADER, "");
                    return isPublic.getAsBoolean() || equal(got, l.token) ? Optional.empty()
                            : Optional.of("Unauthorized: a private sandbox's preview needs its token in the " + TOKEN_HEADER + " header");
                }));
                l.standard.put(port, f);
            }
            return json.createObjectNode().put("sandboxId", sandboxId).put("url", f.url().toString()).put("token", l.token);
        }
    }

    /** {@code {sandboxId, port, token, url}}: a new signed URL of the port, answering without a header until {@code expiresIn}. */
    ObjectNode signed(String sandboxId, EmulatedSandbox sandbox, int port, Duration expiresIn) throws IOException {
        Links l = links(sandboxId);
        synchronized (l) {
            ensureOpen(l, sandboxId);
            String token = randomToken(24);
            Instant expires = Instant.now().plus(expiresIn);
            Signed[] self = new Signed[1];
            PortEdge f = PortEdge.open(sandbox, port, PreviewFront.gate(headers -> self[0].revoked
                    ? Optional.of("Unauthorized: this signed preview URL was revoked")
                    : Instant.now().isAfter(self[0].expires) ? Optional.of("Unauthorized: this signed preview URL has expired")
                    : Optional.empty()));
            self[0] = new Signed(port, expires, f);
            l.signed.put(token, self[0]);
            return json.createObjectNode().put("sandboxId", sandboxId).put("port", port).put("token", token)
                    .put("url", f.url().toString());
        }
    }

    /** Revokes a signed URL; false when the sandbox has no such token for that port. */
    boolean expire(String sandboxId, int port, String token) {
        Links l = bySandbox.get(sandboxId);
        Signed s = l == null ? null : l.signed.get(token);
        if (s == null || s.port != port) {
            return false;
        }
        s.revoked = true;
        return true;
    }

    /** Ends every link of the sandbox (it stopped or was deleted); a later start gets a new token. */
    void close(String sandboxId) {
        Links l = bySandbox.remove(sandboxId);
        if (l == null) {
            return;
        }
        synchronized (l) {
            l.closed = true;
            l.standard.values().forEach(PortEdge::close);
            l.signed.values().forEach(s -> s.front.close());
        }
    }

    void closeAll() {
        bySandbox.keySet().forEach(this::close);
    }

    private Links links(String sandboxId) {
        return bySandbox.computeIfAbsent(sandboxId, k -> new Links());
    }

    private static void ensureOpen(Links l, String sandboxId) throws IOException {
        if (l.closed) {
            throw new IOException("sandbox " + sandboxId + " stopped");
        }
    }

    private static boolean equal(String a, String b) {
        return MessageDigest.isEqual(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }

    private static String randomToken(int n) {
        char[] c = new char[n];
        for (int i = 0; i < n; i++) {
            c[i] = ALPHABET[RANDOM.nextInt(ALPHABET.length)];
        }
        return new String(c);
    }
}
