package dev.airlock.modal;

import dev.airlock.AirlockException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.modal.emulator.ModalEmulator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client's TLS path against a real TLS server: the emulator in TLS mode with a certificate it
 * made. Trusted through {@code airlock.modal.ca-file}, commands run; without it, the handshake is
 * refused with one clear line (system roots do not know the emulator's certificate).
 */
class ModalTlsTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture("", Map.of(ModalEmulator.TLS, "true"));

    @Test
    void aClientTrustingTheEmulatorsCertificateRunsCommandsOverTls() {
        Path ca = EMULATOR.served.emulator().caFile().orElseThrow();
        assertEquals("https", EMULATOR.served.emulator().url().getScheme());
        Settings s = EMULATOR.settings().with(ModalSettings.CA_FILE, ca.toString());
        try (Environment env = new ModalProvider().open(OpenContext.of(s))) {
            ExecResult r = env.exec(ExecRequest.builder("cat").stdin(new byte[] {0, 1, (byte) 0xff, '\n'}).build());
            assertEquals(0, r.exitCode(), r.stderr().text());
            assertEquals(4, r.stdout().size());
            assertEquals((byte) 0xff, r.stdout().bytes()[2]);
        }
    }

    @Test
    void withoutTheCertificateTheHandshakeIsRefusedInOneLine() {
        Settings s = EMULATOR.settings().with("airlock.modal.retry.max-attempts", "1");
        AirlockException e = assertThrows(AirlockException.class, () -> new ModalProvider().open(OpenContext.of(s)).close());
        String m = e.getMessage();
        assertFalse(m.contains("\n"), m);
        assertFalse(m.contains(ModalFixture.TOKEN_SECRET), m);
        assertTrue(m.toLowerCase(java.util.Locale.ROOT).contains("certificate") || m.toLowerCase(java.util.Locale.ROOT).contains("tls")
                || m.toLowerCase(java.util.Locale.ROOT).contains("handshake"), m);
    }
}
