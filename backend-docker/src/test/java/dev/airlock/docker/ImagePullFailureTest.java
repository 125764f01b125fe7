package dev.airlock.docker;

import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A pull that fails: a network failure is the registry being unavailable (named with the image and
 * the cause, never a usage error, which the CLI prints as "airlock: usage:"); a missing image or a
 * denied pull is the image setting's to fix. The texts are the daemon's own words.
 */
class ImagePullFailureTest {

    @Test
    void aNetworkFailureNamesTheRegistryImageAndCause() {
        RuntimeException e = DockerDaemon.pullFailed("ghcr.io/acme/tool:1.2",
                "Get \"https://ghcr.io/v2/\": dial tcp: lookup ghcr.io on 127.0.0.11:53: server misbehaving");
        assertInstanceOf(BackendUnavailableException.class, e);
        assertTrue(e.getMessage().startsWith("image ghcr.io/acme/tool:1.2 is not on the Docker host and pulling it failed:"
                + " the registry ghcr.io could not be reached (Get"), e.getMessage());
        assertTrue(e.getMessage().contains("server misbehaving") && !e.getMessage().contains("\n"), e.getMessage());

        RuntimeException hub = DockerDaemon.pullFailed("alpine:3.20",
                "Get \"https://registry-1.docker.io/v2/\": net/http: request canceled while waiting for connection"
                        + " (Client.Timeout exceeded while awaiting headers)");
        assertInstanceOf(BackendUnavailableException.class, hub);
        assertTrue(hub.getMessage().contains("image alpine:3.20 ") && hub.getMessage().contains("the registry docker.io could not be reached"),
                hub.getMessage());
    }

    @Test
    void aMissingImageIsTheSettingsToFix() {
        RuntimeException e = DockerDaemon.pullFailed("localhost:5000/nope:latest",
                "manifest for localhost:5000/nope:latest not found: manifest unknown: manifest unknown");
        assertInstanceOf(ConfigurationException.class, e);
        assertTrue(e.getMessage().contains("(registry localhost:5000)") && e.getMessage().contains(DockerSettings.IMAGE), e.getMessage());
    }

    @Test
    void theRegistryIsTheFirstPartOnlyWhenItLooksLikeAHost() {
        assertEquals("docker.io", CredentialHelpers.registry("library/alpine:3"));
        assertEquals("docker.io", CredentialHelpers.registry("acme/tool:1"));
        assertEquals("quay.io", CredentialHelpers.registry("quay.io/acme/tool:1"));
        assertEquals("localhost", CredentialHelpers.registry("localhost/tool:1"));
        assertEquals("[::1]:5000", CredentialHelpers.registry("[::1]:5000/tool:1"));
    }
}
