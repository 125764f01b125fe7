package dev.airlock.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.settings.Secret;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.PortForwarder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A port of a Daytona sandbox as a <em>signed</em> preview URL: the service's proxy answers it with
 * no header (the standard preview URL needs {@code x-daytona-preview-token}, which a caller's
 * browser or {@code curl} would not send), for {@link DaytonaSettings#PREVIEW_EXPIRY}. Any port
 * 1-65535 (the service's current range). {@link #close} revokes the URL on a sandbox Airlock made;
 * on an attached sandbox the URL is left to its expiry (the CLI's {@code airlock url} prints it from
 * an environment it closes at once). The sandbox's deletion ends every URL.
 */
final class DaytonaPreviews implements PortForwarder {
    private static final Logger LOG = LoggerFactory.getLogger(DaytonaPreviews.class);

    private final DaytonaApi api;
    private final String sandboxId;
    private final Duration expiry;
    private final boolean revokeOnClose;
    /** Each open port's signed token, to revoke it. */
    private final Map<Integer, Secret> tokens = new ConcurrentHashMap<>();

    DaytonaPreviews(DaytonaApi api, String sandboxId, Duration expiry, boolean revokeOnClose) {
        this.api = api;
        this.sandboxId = sandboxId;
        this.expiry = expiry;
        this.revokeOnClose = revokeOnClose;
    }

    @Override
    public URI open(int port, Deadline deadline) throws IOException {
        JsonNode link;
        try {
            link = api.signedPreviewUrl(sandboxId, port, expiry, deadline);
        } catch (AirlockException e) {
            throw new IOException(e.getMessage(), e);
        }
        String url = link.path("url").asText("");
        String token = link.path("token").asText("");
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new BackendException("Daytona answered the preview link of port " + port + " with no usable URL");
        }
        if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null || token.isEmpty()) {
            throw new BackendException("Daytona answered the preview link of port " + port + " with no usable URL");
        }
        tokens.put(port, Secret.of(token));
        return uri.getPath() == null || uri.getPath().isEmpty() ? uri.resolve("/") : uri;
    }

    @Override
    public void close(int port, URI uri) {
        Secret token = tokens.remove(port);
        if (token == null || !revokeOnClose) {
            return;
        }
        try {
            api.expireSignedPreviewUrl(sandboxId, port, token, Deadline.in(Duration.ofSeconds(30)));
        } catch (AirlockException e) {
            LOG.warn("could not revoke the preview link of port {} of Daytona sandbox {} (it expires by itself): {}",
                    port, sandboxId, e.getMessage());
        }
    }
}
