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
    void allowlistIsNotSupportedYetByAnyBackend() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> NetworkMode.require(Settings.of(NetworkMode.KEY, "allowlist"), "docker",
                        EnumSet.of(NetworkMode.ON, NetworkMode.OFF)));
        assertEquals("airlock.network=allowlist is not supported yet by the docker backend; use on or off", e.getMessage());
    }

    @Test
    void anotherWordNamesTheValidOnes() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> NetworkMode.require(Settings.of(NetworkMode.KEY, "none"), "docker", EnumSet.of(NetworkMode.ON)));
        assertEquals(true, e.getMessage().contains("on, off, allowlist"), e.getMessage());
    }
}
