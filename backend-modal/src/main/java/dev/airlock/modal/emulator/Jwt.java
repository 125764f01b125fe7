package dev.airlock.modal.emulator;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The emulator's tokens: HS256 JWTs with {@code sub} and {@code exp}, signed with a key made at start. */
final class Jwt {
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final Pattern SUB = Pattern.compile("\"sub\":\"([^\"]*)\"");
    private static final Pattern EXP = Pattern.compile("\"exp\":(\\d+)");
    private final byte[] key = new byte[32];

    Jwt() {
        new SecureRandom().nextBytes(key);
    }

    String issue(String subject, long expEpochSeconds) {
        String head = B64.encodeToString("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));
        String body = B64.encodeToString(("{\"sub\":\"" + subject + "\",\"exp\":" + expEpochSeconds + "}")
                .getBytes(StandardCharsets.UTF_8));
        return head + "." + body + "." + B64.encodeToString(sign(head + "." + body));
    }

    /** The subject of a token this emulator signed that has not expired at {@code nowEpochSeconds}. */
    Optional<String> verify(String token, long nowEpochSeconds) {
        String[] p = token.split("\\.");
        if (p.length != 3) {
            return Optional.empty();
        }
        byte[] sig;
        String body;
        try {
            sig = Base64.getUrlDecoder().decode(p[2]);
            body = new String(Base64.getUrlDecoder().decode(p[1]), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        if (!MessageDigest.isEqual(sig, sign(p[0] + "." + p[1]))) {
            return Optional.empty();
        }
        Matcher s = SUB.matcher(body);
        Matcher e = EXP.matcher(body);
        if (!s.find() || !e.find() || Long.parseLong(e.group(1)) <= nowEpochSeconds) {
            return Optional.empty();
        }
        return Optional.of(s.group(1));
    }

    private byte[] sign(String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JVM", e);
        }
    }
}
