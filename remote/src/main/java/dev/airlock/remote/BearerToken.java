package dev.airlock.remote;

import dev.airlock.settings.Secret;
import okhttp3.Request;

import java.util.Objects;

/**
 * A bearer token that is only ever revealed into the one header that sends it. Its
 * {@code toString} redacts, so a request builder, settings record or exception that mentions it
 * prints nothing secret.
 */
public final class BearerToken {
    private final Secret token;

    public BearerToken(Secret token) {
        this.token = Objects.requireNonNull(token, "token");
    }

    public Request.Builder apply(Request.Builder b) {
        return b.header("Authorization", "Bearer " + token.reveal());
    }

    public Secret secret() {
        return token;
    }

    @Override
    public String toString() {
        return "BearerToken[redacted]";
    }
}
