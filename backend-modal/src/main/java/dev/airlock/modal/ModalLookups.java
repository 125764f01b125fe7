package dev.airlock.modal;

import dev.airlock.remote.WireFailure;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What an open looks up before its create, kept for this JVM: the auth token, the app's id and the
 * image's id (with the environment's image builder version that built it). Each open asked the
 * service for all four again (four calls of the open's nine), where the SDKs ask once per client
 * and a program keeps its client for its life; this is that rule for the JVM, whose provider opens
 * many environments.
 *
 * <p>Why an entry does not outlive what it names: everything is keyed by the server, the token
 * pair (the secret by its digest, never kept in clear) and every setting the answer depends on
 * (environment, app name, image tag, an explicit builder version), so another workspace,
 * environment or image never sees it. The auth token is used only until 300 s before its
 * {@code exp}, as before. An app or image the service no longer has (an app stopped, an emulator
 * started again on the same port) or a token it revoked is found out by the create, which then
 * refuses with NOT_FOUND, FAILED_PRECONDITION, UNAUTHENTICATED or PERMISSION_DENIED before making
 * anything: {@link ModalSandbox#create} then forgets the entry and opens once more, asking again,
 * so a stale entry costs one refused call, never a failed open. An image built under an older
 * builder version stays a valid image; a new one is asked for when the version is set explicitly
 * to another value (the key changes).
 */
final class ModalLookups {
    /** The ids an open needs before its create. */
    record Found(String app, String image) {
    }

    private static final Map<String, Found> FOUND = new ConcurrentHashMap<>();
    private static final Map<String, Token> TOKENS = new ConcurrentHashMap<>();
    /** The refusals that can mean a kept id or token is stale (answered before anything was made). */
    private static final Set<String> STALE = Set.of("NOT_FOUND", "FAILED_PRECONDITION", "UNAUTHENTICATED", "PERMISSION_DENIED");

    private record Token(String value, long exp) {
    }

    private ModalLookups() {
    }

    /** The kept ids for these settings; never for a sandbox made from a snapshot (its image is asked for each time). */
    static Optional<Found> found(ModalSettings s) {
        if (s.snapshot().isPresent()) {
            return Optional.empty();
        }
        return Optional.ofNullable(FOUND.get(key(s)));
    }

    static void keep(ModalSettings s, Found found) {
        if (s.snapshot().isEmpty()) {
            FOUND.put(key(s), found);
        }
    }

    /** The kept auth token of this server and token pair, when it has more than {@code marginSecs} left. */
    static Optional<String> token(ModalSettings s, long nowSecs, long marginSecs) {
        Token t = TOKENS.get(account(s));
        return t != null && nowSecs < t.exp - marginSecs ? Optional.of(t.value) : Optional.empty();
    }

    static void keepToken(ModalSettings s, String token, long exp) {
        TOKENS.put(account(s), new Token(token, exp));
    }

    /** Forgets everything kept for these settings' server and token pair. */
    static void forget(ModalSettings s) {
        TOKENS.remove(account(s));
        FOUND.keySet().removeIf(k -> k.startsWith(account(s) + "\n"));
    }

    /** Whether {@code e} is the service's answer that a kept id or token may be stale. */
    static boolean refusedAsStale(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof WireFailure w) {
                return w.stage() == WireFailure.Stage.ANSWERED && STALE.contains(w.grpcCode());
            }
        }
        return false;
    }

    private static String account(ModalSettings s) {
        return s.serverUrl() + "\n" + s.tokenId().reveal() + "\n" + digest(s.tokenSecret().reveal());
    }

    private static String key(ModalSettings s) {
        return account(s) + "\n" + s.environment() + "\n" + s.app() + "\n" + s.image()
                + "\n" + s.imageBuilderVersion().orElse("");
    }

    private static String digest(String secret) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
