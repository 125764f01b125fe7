package dev.airlock.containment;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HomeModeTest {

    @ParameterizedTest
    @CsvSource({
            "auto, AUTO", "AUTO, AUTO", "' auto ', AUTO",
            "real, REAL", "host, REAL", "user, REAL", "real_home, REAL", "real-home, REAL", "Real-Home, REAL",
            "profile, PROFILE", "isolated, PROFILE", "profile_home, PROFILE", "profile-home, PROFILE", "ISOLATED, PROFILE"})
    void everyAliasParses(String raw, HomeMode expected) {
        assertEquals(expected, HomeMode.parse(raw));
    }

    @ParameterizedTest
    @ValueSource(strings = {"sandbox", "realhome", "profile home", "home", "none"})
    void unknownValuesNameTheValidOnes(String raw) {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> HomeMode.parse(raw));
        String m = e.getMessage();
        assertTrue(m.contains("'" + raw + "'"), m);
        for (String valid : new String[] {"auto", "real", "profile", "host", "user", "real_home", "real-home", "isolated",
                "profile_home", "profile-home"}) {
            assertTrue(m.contains(valid), () -> m + " should name " + valid);
        }
        assertFalse(m.contains("\n"), "one line");
    }

    @Test
    void theEnvironmentVariableReachesTheKey() {
        Settings s = Settings.builder().environment(Map.of("AIRLOCK_HOME_MODE", "isolated", "AIRLOCK_HOME", "/srv/al")).build();
        assertEquals(HomeMode.PROFILE, ContainmentSettings.from(s.with(ContainerDetection.KEY, "no")).homeMode());
        assertEquals("/srv/al", s.get(ContainmentSettings.HOME_KEY).orElseThrow());
    }

    @Test
    void anUnknownValueInTheEnvironmentFailsAtOnce() {
        Settings s = Settings.builder().environment(Map.of("AIRLOCK_HOME_MODE", "jail")).build();
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> ContainmentSettings.from(s));
        assertTrue(e.getMessage().contains("airlock.home-mode"), e.getMessage());
    }
}
