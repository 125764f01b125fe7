package dev.airlock.modal;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Router JWTs that live 20 s: each is within 30 s of its {@code exp} from the start, so the client
 * fetches access again before using one (no UNAUTHENTICATED needed), as modal.md asks.
 */
class ModalRouterAccessTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture("", Map.of("airlock.modal.emulator.jwt-ttl", "20"));

    @Test
    void aRouterJwtNearItsExpiryIsFetchedAgainBeforeUse() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings()))) {
            assertEquals("fresh", env.exec(ExecRequest.of("printf fresh")).stdout().text());
        }
        // SandboxCreateV2 handed out the first JWT: every access fetched after it is a refresh.
        assertTrue(EMULATOR.served.journal().entries("SandboxGetCommandRouterAccess").size() > 0,
                "a JWT 20 s from its exp was used as it was");
    }
}
