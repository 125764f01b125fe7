package dev.airlock.modal;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.modal.emulator.ModalEmulator;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code airlock.network=off} is the create's {@code block_network}, as the service reads it; the
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
    void allowlistIsRefusedBeforeAnySandboxIsCreated() {
        long creates = creates();
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> new ModalProvider().open(
                OpenContext.of(EMULATOR.settings().with(Map.of("airlock.network", "allowlist")))).close());
        assertEquals("airlock.network=allowlist is not supported yet by the modal backend; use on or off", e.getMessage());
        assertEquals(creates, creates(), "no sandbox may be created for a mode that is refused");
    }

    private static long creates() {
        return EMULATOR.served.journal().entries().stream().filter(e -> e.call().startsWith("SandboxCreate")).count();
    }
}
