package dev.airlock.modal;

import dev.airlock.AirlockException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.modal.emulator.ModalEmulator;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The image builder version is the environment's, asked of the service as the official SDK asks
 * it ({@code EnvironmentGetOrCreate}), unless the user names one; a version the service does not
 * have is refused in one line.
 */
class ModalBuilderVersionTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture("", Map.of("airlock.modal.emulator.image-builder-version", "2025.06"));

    private ModalEmulator emulator() {
        return (ModalEmulator) EMULATOR.served.emulator();
    }

    @Test
    void theEnvironmentsVersionBuildsTheImage() {
        int before = emulator().builderVersionsAsked().size();
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings()))) {
            assertEquals("ok", env.exec(ExecRequest.of("printf ok")).stdout().text());
        }
        List<String> asked = emulator().builderVersionsAsked();
        assertEquals(List.of("2025.06"), asked.subList(before, asked.size()));
    }

    @Test
    void aNamedVersionWinsAndOneTheServiceLacksIsRefusedInOneLine() {
        int before = emulator().builderVersionsAsked().size();
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings()
                .with(Map.of(ModalSettings.IMAGE_BUILDER_VERSION, "2024.04"))))) {
            assertEquals("ok", env.exec(ExecRequest.of("printf ok")).stdout().text());
        }
        AirlockException e = assertThrows(AirlockException.class, () -> new ModalProvider().open(OpenContext.of(EMULATOR.settings()
                .with(Map.of(ModalSettings.IMAGE_BUILDER_VERSION, "1999.01")))).close());
        assertTrue(e.getMessage().contains("image builder version 1999.01 is not supported") && !e.getMessage().contains("\n"),
                e.getMessage());
        List<String> asked = emulator().builderVersionsAsked();
        assertEquals(List.of("2024.04", "1999.01"), asked.subList(before, asked.size()));
    }
}
