package dev.airlock.containment;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ContainmentSettingsTest {

    @Test
    void defaults() {
        ContainmentSettings c = ContainmentSettings.from(Settings.empty());
        assertEquals(HomeMode.AUTO, c.homeMode());
        assertEquals(Profile.NONE, c.profile());
        assertEquals("auto", c.container());
        assertEquals(Optional.empty(), c.runDir());
        assertEquals(Optional.empty(), c.privateDirBase());
        assertEquals(Set.of(), c.unset());
    }

    @Test
    void evalProfileNeedsARunDir() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> ContainmentSettings.from(Settings.of("airlock.profile", "eval")));
        assertTrue(e.getMessage().contains("airlock.run-dir"), e.getMessage());
    }

    @Test
    void evalProfileLaysOutTheRunDir() {
        ContainmentSettings c = ContainmentSettings.from(Settings.of("airlock.profile", "EVAL", "airlock.run-dir", "/runs/7//"));
        assertEquals(Optional.of("/runs/7"), c.runDir());
        assertEquals(Optional.of("/runs/7/tmp"), c.privateDirBase());
        assertEquals(Set.of("DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"), c.unset());
    }

    @Test
    void runDirMustBeAbsolute() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> ContainmentSettings.from(Settings.of("airlock.profile", "eval", "airlock.run-dir", "runs/7")));
        assertTrue(e.getMessage().contains("absolute"), e.getMessage());
    }

    @Test
    void evalWithRealHomeIsAContradiction() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> ContainmentSettings.from(
                Settings.of("airlock.profile", "eval", "airlock.run-dir", "/r", "airlock.home-mode", "host")));
        assertTrue(e.getMessage().contains("'host'") && e.getMessage().contains("/r/home"), e.getMessage());
    }

    @Test
    void unknownProfileAndContainerValuesNameTheValidOnes() {
        ConfigurationException p = assertThrows(ConfigurationException.class,
                () -> ContainmentSettings.from(Settings.of("airlock.profile", "ci")));
        assertTrue(p.getMessage().contains("none") && p.getMessage().contains("eval"), p.getMessage());
        ConfigurationException c = assertThrows(ConfigurationException.class,
                () -> ContainmentSettings.from(Settings.of("airlock.container", "maybe")));
        assertTrue(c.getMessage().contains("auto, yes, no"), c.getMessage());
    }

    @Test
    void anExplicitAirlockHomeCountsButTheJvmsEnvironmentDescribesThisHostOnly() {
        assertEquals(Optional.of("/srv/airlock"),
                ContainmentSettings.from(Settings.of("airlock.home", "/srv/airlock/")).airlockHome());
        Settings fromEnv = Settings.builder().environment(Map.of("AIRLOCK_HOME", "/Users/me/.airlock")).build();
        assertEquals(Optional.empty(), ContainmentSettings.from(fromEnv).airlockHome());
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> ContainmentSettings.from(Settings.of("airlock.home", "rel/dir")));
        assertTrue(e.getMessage().contains("airlock.home"), e.getMessage());
    }
}
