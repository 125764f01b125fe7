package dev.airlock.modal;

import dev.airlock.remote.RetryPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client's sandbox and process layer against the emulator, below the core. */
class ModalSandboxTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    private static ModalClient client(Map<String, String> extra) {
        var s = EMULATOR.settings().with(extra);
        return new ModalClient(ModalSettings.from(s, Map.of()), RetryPolicy.from(s, ModalSettings.PREFIX));
    }

    @Test
    void execReportsItsGroupStreamsStdinAndExits() throws Exception {
        for (String family : List.of("v2", "v1")) {
            try (ModalClient c = client(Map.of(ModalSettings.FAMILY, family)); ModalSandbox sb = ModalSandbox.create(c, false)) {
                ModalProcess p = sb.exec(List.of("sh", "-c", ModalEnvironment.WRAPPER, "airlock", ModalEnvironment.WRAPPER, "sh",
                        "cat; echo err >&2; exit 3", ""), Map.of());
                assertTrue(p.processGroup().isPresent(), "no process group reported (" + family + ")");
                try (OutputStream in = p.stdin()) {
                    in.write("hello".getBytes(StandardCharsets.UTF_8));
                }
                assertEquals("hello", new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8));
                assertEquals("err\n", new String(p.stderr().readAllBytes(), StandardCharsets.UTF_8));
                assertEquals(3, p.waitFor());
            }
        }
        assertEquals(0, ((dev.airlock.modal.emulator.ModalEmulator) EMULATOR.served.emulator()).liveSandboxes());
    }
}
