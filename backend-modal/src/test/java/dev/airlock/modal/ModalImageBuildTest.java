package dev.airlock.modal;

import dev.airlock.BackendException;
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
 * An image that is still building: the client follows ImageJoinStreaming to its result, and when
 * the stream is cut part way it joins again from the last entry it saw, not from the start; an
 * image the emulator cannot have fails its build.
 */
class ModalImageBuildTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture("", Map.of("airlock.modal.emulator.image-build-entries", "5",
            "airlock.modal.emulator.image-build-cut-after", "2"));

    @Test
    void aBuildingImageIsJoinedAndACutStreamResumesFromTheLastEntry() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings()))) {
            assertEquals("ok", env.exec(ExecRequest.of("printf ok")).stdout().text());
        }
        assertEquals(List.of("", "2"), ((ModalEmulator) EMULATOR.served.emulator()).imageJoinsFrom());
    }

    /** A tag no registry has fails its build, as on the service; the client says which image and why, and makes nothing. */
    @Test
    void anUnknownImageFailsItsBuild() {
        int creates = EMULATOR.served.journal().entries("SandboxCreateV2").size();
        BackendException e = assertThrows(BackendException.class, () -> new ModalProvider().open(OpenContext.of(
                EMULATOR.settings().with(Map.of(ModalSettings.IMAGE, "no-such-image-zzz:404")))).close());
        assertTrue(e.getMessage().startsWith("Modal could not build the image: Could not pull the image no-such-image-zzz:404"),
                e.getMessage());
        assertEquals(creates, EMULATOR.served.journal().entries("SandboxCreateV2").size(), "no sandbox made");
    }
}
