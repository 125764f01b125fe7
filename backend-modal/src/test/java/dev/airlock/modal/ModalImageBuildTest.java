package dev.airlock.modal;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.modal.emulator.ModalEmulator;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * An image that is still building: the client follows ImageJoinStreaming to its result, and when
 * the stream is cut part way it joins again from the last entry it saw, not from the start.
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
}
