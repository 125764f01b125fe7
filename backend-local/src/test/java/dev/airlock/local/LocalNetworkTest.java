package dev.airlock.local;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code airlock.network} drives bubblewrap's network namespace; the older {@code airlock.local.network}
 * may only agree with it, and {@code off} without bubblewrap is refused before anything runs.
 * (What a command then reaches is the kit's NetworkPolicy group.)
 */
class LocalNetworkTest {

    @Test
    void airlockNetworkWinsOverTheEvalProfilesDefaultAndTheOldKeyStillWorksAlone() {
        assertFalse(LocalSettings.from(Settings.of("airlock.network", "off")).network());
        assertTrue(LocalSettings.from(Settings.of("airlock.profile", "eval", "airlock.run-dir", "/tmp",
                "airlock.network", "on")).network());
        assertFalse(LocalSettings.from(Settings.of(LocalSettings.NETWORK, "off")).network());
        assertFalse(LocalSettings.from(Settings.of("airlock.network", "off", LocalSettings.NETWORK, "off")).network());
    }

    @Test
    void theTwoKeysDisagreeingIsOneLine() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> LocalSettings.from(Settings.of("airlock.network", "on", LocalSettings.NETWORK, "off")));
        assertEquals("airlock.network=on and airlock.local.network=off disagree; remove airlock.local.network"
                + " (airlock.network is the one setting for every backend)", e.getMessage());
    }

    @Test
    void offWithoutBubblewrapIsRefusedAtOpen() {
        for (String key : new String[] {"airlock.network", LocalSettings.NETWORK}) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> new LocalProvider().open(OpenContext.of(
                    Settings.of("airlock.container", "no", LocalSettings.ISOLATION, "none", key, "off"))).close());
            assertTrue(e.getMessage().startsWith(key + "=off needs bubblewrap's own network namespace")
                    && e.getMessage().contains(LocalSettings.ISOLATION + "=none") && !e.getMessage().contains("\n"), e.getMessage());
        }
    }
}
