package dev.airlock.modal;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.modal.emulator.ModalEmulator;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.airlock.modal.proto.NetworkAccess;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code airlock.network=off} is the create's {@code block_network}, as the service reads it, and
 * {@code allowlist} its outbound CIDR and domain allowlists; the
 * kit's NetworkPolicy group (ModalCompatibilityTest) checks what a command then reaches.
 */
class ModalNetworkTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    private ModalEmulator emulator() {
        return (ModalEmulator) EMULATOR.served.emulator();
    }

    @Test
    void offCreatesTheSandboxWithItsNetworkBlocked() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings().with(Map.of("airlock.network", "off"))))) {
            assertTrue(emulator().networkBlocked(ModalBackend.of(env).sandboxId()));
        }
    }

    @Test
    void onLeavesTheNetworkOpen() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings().with(Map.of("airlock.network", "on"))))) {
            assertFalse(emulator().networkBlocked(ModalBackend.of(env).sandboxId()));
        }
    }

    @Test
    void allowlistSendsItsRangesAndDomainsAsTheSdksOutboundAllowlists() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings().with(Map.of("airlock.network", "allowlist",
                "airlock.network.allow.corp", "10.0.0.0/8", "airlock.network.allow.one", "203.0.113.7",
                "airlock.network.allow.npm", "registry.npmjs.org"))))) {
            NetworkAccess asked = emulator().networkAccess(ModalBackend.of(env).sandboxId());
            assertEquals(3, asked.getNetworkAccessType(), "not an ALLOWLIST network access");
            assertEquals(List.of("10.0.0.0/8", "203.0.113.7/32"), asked.getAllowedCidrsList());
            assertEquals(List.of("registry.npmjs.org"), asked.getAllowedDomainsList());
            assertFalse(emulator().networkBlocked(ModalBackend.of(env).sandboxId()));
        }
    }

    @Test
    void anAllowlistEntryWithAPortIsRefusedBeforeAnySandboxIsCreated() {
        long creates = creates();
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> new ModalProvider().open(
                OpenContext.of(EMULATOR.settings().with(Map.of("airlock.network", "allowlist",
                        "airlock.network.allow.web", "203.0.113.7:443")))).close());
        assertEquals("airlock.network.allow.web=203.0.113.7/32:443: the modal backend's allowlist takes host names and IPv4"
                + " ranges on every port (like 10.0.0.0/8), not a port", e.getMessage());
        assertEquals(creates, creates(), "no sandbox may be created for an allowlist that is refused");
    }

    private static long creates() {
        return EMULATOR.served.journal().entries().stream().filter(e -> e.call().startsWith("SandboxCreate")).count();
    }
}
