package dev.airlock;

import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class NetworkModeTest {

    @Test
    void unsetMeansOnAndADeclaredModeIsGiven() {
        assertEquals(NetworkMode.ON, NetworkMode.require(Settings.of(), "acme", Capabilities.pipe().networkModes()));
        assertEquals(NetworkMode.OFF, NetworkMode.require(Settings.of(NetworkMode.KEY, "off"), "acme",
                EnumSet.of(NetworkMode.ON, NetworkMode.OFF)));
    }

    @Test
    void aPluginDeclaresOnlyOnUnlessItSaysMore() {
        assertEquals(EnumSet.of(NetworkMode.ON), Capabilities.pipe().networkModes());
        assertEquals(EnumSet.of(NetworkMode.ON, NetworkMode.OFF),
                Capabilities.pipe().withNetworkModes(EnumSet.of(NetworkMode.ON, NetworkMode.OFF)).networkModes());
    }

    @Test
    void offWhereTheBackendCannotEnforceItIsOneLineNamingTheBackendAndWhatToDo() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> NetworkMode.require(Settings.of(NetworkMode.KEY, "off"), "ssh", Capabilities.pipe().networkModes()));
        assertEquals("the ssh backend cannot enforce airlock.network=off (it enforces: on); set airlock.network to one of"
                + " those, or choose a backend that can cut the network (local under bubblewrap, docker, modal, daytona, vercel)", e.getMessage());
    }

    @Test
    void allowlistWhereTheBackendCannotEnforceItNamesTheBackendsThatCan() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> NetworkMode.require(Settings.of(NetworkMode.KEY, "allowlist", "airlock.network.allow.corp", "10.0.0.0/8"),
                        "docker", EnumSet.of(NetworkMode.ON, NetworkMode.OFF)));
        assertEquals("the docker backend cannot enforce airlock.network=allowlist (it enforces: off, on); set airlock.network"
                + " to one of those, or choose a backend that enforces allowlists (local under bubblewrap, docker, modal, daytona,"
                + " vercel)", e.getMessage());
    }

    @Test
    void anAllowlistWithNoDestinationIsRefused() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> NetworkMode.require(Settings.of(NetworkMode.KEY, "allowlist"), "modal", EnumSet.allOf(NetworkMode.class)));
        assertEquals("airlock.network=allowlist names no destination; add airlock.network.allow.NAME=HOST-OR-CIDR[:PORT]"
                + " (like 10.0.0.0/8), or set airlock.network=off", e.getMessage());
    }

    @Test
    void destinationsWithoutTheAllowlistModeAreRefusedRatherThanIgnored() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> NetworkMode.require(Settings.of("airlock.network.allow.corp", "10.0.0.0/8"), "modal", EnumSet.allOf(NetworkMode.class)));
        assertEquals("airlock.network.allow.corp is set, but airlock.network=on does not read it; set airlock.network=allowlist,"
                + " or remove the airlock.network.allow.* keys", e.getMessage());
        assertEquals(NetworkMode.ALLOWLIST, NetworkMode.require(Settings.of(NetworkMode.KEY, "allowlist",
                "airlock.network.allow.corp", "10.0.0.0/8"), "modal", EnumSet.allOf(NetworkMode.class)));
    }

    @Test
    void anotherWordNamesTheValidOnes() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> NetworkMode.require(Settings.of(NetworkMode.KEY, "none"), "docker", EnumSet.of(NetworkMode.ON)));
        assertEquals(true, e.getMessage().contains("on, off, allowlist"), e.getMessage());
    }
}
