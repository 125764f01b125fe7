package dev.airlock.vercel;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Ports;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ports on Vercel as a user meets them: {@code airlock.ports} and the older
 * {@code airlock.vercel.ports} both routed at create, each port's URL the route's own (for an
 * attached sandbox too, from sandbox-get), an undeclared port and more ports than the service
 * routes each one line.
 */
class VercelPortsTest {
    static VercelEmulatorFixture fixture;

    @BeforeAll
    static void start() {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static Environment open(Settings s) {
        return new VercelProvider().open(OpenContext.of(s));
    }

    @Test
    void bothSettingsAreRoutedAndAnAttachedSandboxGivesTheSameUrls() {
        Settings s = fixture.settings().with(Ports.KEY, "3000").with(VercelSettings.PORTS, "3001,3000");
        try (Environment env = open(s)) {
            URI a = env.ports().expose(3000);
            URI b = env.ports().expose(3001);
            assertEquals("127.0.0.1", a.getHost(), a.toString());
            assertTrue(!a.equals(b), a + " " + b);
            try (Environment attached = open(fixture.settings().with(VercelSettings.SANDBOX_ID, env.id()))) {
                assertEquals(Map.of(3000, a), Map.of(3000, attached.ports().expose(3000)),
                        "an attached sandbox's route is the one sandbox-get answers");
                assertEquals(b, attached.ports().expose(3001));
            }
        }
    }

    @Test
    void anUndeclaredPortIsOneLineNamingItAndTheSetting() {
        try (Environment env = open(fixture.settings().with(Ports.KEY, "3000"))) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> env.ports().expose(4000));
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
            assertTrue(e.getMessage().contains("4000") && e.getMessage().contains(Ports.KEY + "=4000")
                    && e.getMessage().contains("routes 3000"), e.getMessage());
        }
    }

    @Test
    void moreThanFifteenPortsIsOneLineBeforeAnythingIsCreated() {
        int before = fixture.emulator.sandboxNames().size();
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> open(fixture.settings()
                .with(Ports.KEY, "3000,3001,3002,3003,3004,3005,3006,3007").with(VercelSettings.PORTS,
                        "4000,4001,4002,4003,4004,4005,4006,4007")).close());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().contains("16") && e.getMessage().contains("15"), e.getMessage());
        assertEquals(before, fixture.emulator.sandboxNames().size());
    }
}
