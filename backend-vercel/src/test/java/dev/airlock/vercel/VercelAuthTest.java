package dev.airlock.vercel;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The emulator accepts only the token and team in its environment ({@code VERCEL_TOKEN},
 * {@code VERCEL_TEAM_ID}) and refuses the rest 403 {@code forbidden} as the API does; the client
 * says so in one line naming the variable, with no token in it, and makes no sandbox.
 */
class VercelAuthTest {
    static final String WRONG = "wrong-vercel-token-6e02b4";
    static VercelEmulatorFixture fixture;

    @BeforeAll
    static void start() {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @Test
    void aWrongTokenIsRefusedInOneLineWithoutTheToken() {
        assertRefused(fixture.settings().with("airlock.vercel.token", WRONG),
                "Vercel denied create a sandbox (403) (forbidden: Not authorized); the token in VERCEL_TOKEN lacks access to this project or team");
    }

    @Test
    void aTeamTheTokenIsNotInIsRefused() {
        assertRefused(fixture.settings().with("airlock.vercel.team-id", "team_not_mine"),
                "Vercel denied create a sandbox (403) (forbidden: Not authorized: the token has no access to this team);"
                        + " the token in VERCEL_TOKEN lacks access to this project or team");
    }

    @Test
    void noTeamIsRefused() {
        assertRefused(fixture.settings().with("airlock.vercel.team-id", ""),
                "Vercel denied create a sandbox (403) (forbidden: Not authorized: this call needs the team it acts in (teamId));"
                        + " the token in VERCEL_TOKEN lacks access to this project or team");
    }

    private static void assertRefused(Settings s, String expected) {
        int before = fixture.journal.entries("sandbox-create").size();
        AirlockException e = assertThrows(AirlockException.class, () -> new VercelProvider().open(OpenContext.of(s)).close());
        assertInstanceOf(ConfigurationException.class, e);
        assertEquals(expected, e.getMessage());
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage());
            assertFalse(m.contains(WRONG) || m.contains(VercelEmulatorFixture.TOKEN), "a token in " + t.getClass().getName() + ": " + m);
        }
        assertTrue(fixture.emulator.sandboxNames().isEmpty(), "no sandbox with refused credentials");
        assertEquals(before + 1, fixture.journal.entries("sandbox-create").size(), "refused once, not retried");
        fixture.journal.assertNoneCarries(WRONG, VercelEmulatorFixture.TOKEN);
    }
}
