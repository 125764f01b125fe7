package dev.airlock.vercel;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.emulator.FaultPlan;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@code airlock.network=off} is the create's network policy {@code deny-all}, as the SDK sends
 * {@code networkPolicy: "deny-all"}; the kit's NetworkPolicy group (VercelCompatibilityTest) checks
 * what a command then reaches.
 */
class VercelNetworkTest {
    static VercelEmulatorFixture fixture;

    @BeforeAll
    static void start() {
        fixture = new VercelEmulatorFixture(FaultPlan.none());
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static Environment open(String mode) {
        return new VercelProvider().open(OpenContext.of(fixture.settings().with(Map.of("airlock.network", mode))));
    }

    @Test
    void offCreatesTheSandboxDenyingAllAndOnLeavesItsDefault() {
        try (Environment off = open("off"); Environment on = open("on")) {
            assertEquals("deny-all", fixture.emulator.networkMode(off.id()));
            assertEquals("allow-all", fixture.emulator.networkMode(on.id()));
        }
    }

    @Test
    void allowlistSendsItsDomainsAndRangesAsTheSdksNetworkPolicy() {
        try (Environment env = new VercelProvider().open(OpenContext.of(fixture.settings().with(Map.of("airlock.network", "allowlist",
                "airlock.network.allow.corp", "10.0.0.0/8", "airlock.network.allow.npm", "registry.npmjs.org",
                "airlock.network.allow.wild", "*.example.com"))))) {
            assertEquals("custom", fixture.emulator.networkMode(env.id()));
            assertEquals(List.of(List.of("registry.npmjs.org", "*.example.com"), List.of("10.0.0.0/8")), fixture.emulator.allowLists(env.id()));
        }
    }

    @Test
    void anAllowlistEntryWithAPortIsRefusedInOneLine() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> new VercelProvider().open(OpenContext.of(
                fixture.settings().with(Map.of("airlock.network", "allowlist", "airlock.network.allow.web", "registry.npmjs.org:443")))).close());
        assertEquals("airlock.network.allow.web=registry.npmjs.org:443: the vercel backend's allowlist takes host names and IPv4"
                + " ranges on every port (like 10.0.0.0/8), not a port", e.getMessage());
    }
}
