package dev.airlock.modal;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The emulator accepts only its token pair (here the fixture's, from its environment) and refuses
 * any other UNAUTHENTICATED, as the service does; the client says so in one line that names the
 * variable to check and holds no token value, and makes no sandbox.
 */
class ModalAuthTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    static final String WRONG_ID = "ak-wrong-id-8d21f0";
    static final String WRONG_SECRET = "as-wrong-secret-5c2e91";

    @Test
    void aWrongTokenSecretIsRefusedInOneLineWithoutTheToken() {
        assertRefused(EMULATOR.settings().with(ModalSettings.TOKEN_SECRET, WRONG_SECRET));
    }

    @Test
    void aWrongTokenIdIsRefusedInOneLineWithoutTheToken() {
        assertRefused(EMULATOR.settings().with(ModalSettings.TOKEN_ID, WRONG_ID));
    }

    private static void assertRefused(Settings s) {
        long creates = creates();
        AirlockException e = assertThrows(AirlockException.class, () -> new ModalProvider().open(OpenContext.of(s)).close());
        assertInstanceOf(ConfigurationException.class, e);
        assertEquals(EXPECTED, e.getMessage());
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage());
            for (String v : new String[] {WRONG_ID, WRONG_SECRET, ModalFixture.TOKEN_ID, ModalFixture.TOKEN_SECRET}) {
                assertFalse(m.contains(v), "a token value in " + t.getClass().getName() + ": " + m);
            }
        }
        assertEquals(creates, creates(), "no sandbox was created with a refused token");
        EMULATOR.served.journal().assertNoneCarries(WRONG_ID, WRONG_SECRET);
    }

    static final String EXPECTED = "Modal refused the credentials for AuthTokenGet (UNAUTHENTICATED); check MODAL_TOKEN_ID and MODAL_TOKEN_SECRET";

    private static long creates() {
        return EMULATOR.served.journal().entries().stream().filter(x -> x.call().startsWith("SandboxCreate")).count();
    }

}
