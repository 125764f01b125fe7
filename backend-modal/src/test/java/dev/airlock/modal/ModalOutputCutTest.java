package dev.airlock.modal;

import dev.airlock.BackendException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An output that cannot be read to its end (the router fails the read with INTERNAL, which is not
 * retried): the exec fails with a typed error, never returns short output with the exit code.
 */
class ModalOutputCutTest {
    /** The third and fourth output reads: those of the first exec after the open's probe (whose two come first). */
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture(
            "TaskExecStdioRead:status=500@nth=3,TaskExecStdioRead:status=500@nth=4", Map.of());

    @Test
    void anOutputThatCannotBeReadToItsEndFailsTypedNeverShort() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings()))) {
            assertEquals(2L, EMULATOR.served.faults().callCounts().get("TaskExecStdioRead"),
                    "the open's probe no longer reads its outputs once each: move the faults to this exec's reads");
            BackendException e = assertThrows(BackendException.class,
                    () -> env.exec(ExecRequest.of("head -c 300000 /dev/zero | tr '\\0' m; exit 3")));
            assertTrue(e.getMessage().contains("lost"), e.getMessage());
            assertEquals(2L, EMULATOR.served.faults().faults("TaskExecStdioRead"));
            assertEquals("after", env.exec(ExecRequest.of("printf after")).stdout().text(), "the next exec reads whole");
        }
    }
}
