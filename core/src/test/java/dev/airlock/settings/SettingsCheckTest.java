package dev.airlock.settings;

import dev.airlock.ConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Unknown {@code airlock.*} keys are reported with the closest known key, and refused when strict. */
class SettingsCheckTest {
    private static final List<SettingKey> KNOWN = known();

    private static List<SettingKey> known() {
        List<SettingKey> k = new ArrayList<>(CoreSettingKeys.ALL);
        k.add(SettingKey.of("airlock.docker.env.NAME", "string", "", "variables"));
        return k;
    }

    @Test
    void aMisspelledKeyIsNamedWithTheClosestKnownOne() {
        List<String> w = SettingsCheck.unknownKeys(Settings.of("airlock.outptu.max-bytes", "1", "airlock.cancel", "exec"), KNOWN);
        assertEquals(List.of("unknown setting airlock.outptu.max-bytes; did you mean airlock.output.max-bytes? (from the values given in code)"), w);
    }

    @Test
    void aCommandLineNamesItsOwnOptionAsTheSource() {
        Settings s = Settings.builder().values(Map.of("airlock.zzzzzzzzzzzzzzzzzz", "1")).valuesFrom("--set").build();
        assertEquals(List.of("unknown setting airlock.zzzzzzzzzzzzzzzzzz (from --set)"), SettingsCheck.unknownKeys(s, KNOWN));
    }

    @Test
    void knownKeysFamiliesAndListEntriesPass() {
        Settings s = Settings.of("airlock.output.max-bytes", "1", "airlock.docker.env.FOO", "x", "airlock.write.safe-roots.1", "/w",
                "airlock.env.pass", "GITHUB_TOKEN");
        assertEquals(List.of(), SettingsCheck.unknownKeys(s, KNOWN));
    }

    @Test
    void aKeyFarFromEveryKnownOneGetsNoGuess() {
        List<String> w = SettingsCheck.unknownKeys(Settings.of("airlock.zzzzzzzzzzzzzzzzzz", "1"), KNOWN);
        assertEquals(List.of("unknown setting airlock.zzzzzzzzzzzzzzzzzz (from the values given in code)"), w);
    }

    @Test
    void strictMakesItAnError() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> SettingsCheck.unknownKeys(
                Settings.of("airlock.outptu.max-bytes", "1", CoreSettingKeys.STRICT, "true"), KNOWN));
        assertTrue(e.getMessage().contains("airlock.outptu.max-bytes") && e.getMessage().contains("airlock.output.max-bytes"),
                e.getMessage());
    }

    @Test
    void theConfigFileIsCheckedButVariablesAreNot(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("airlock.properties"), "airlock.kill.grase=2s\n");
        Settings s = Settings.builder().configFile(file).environment(Map.of("AIRLOCK_SOMETHING_ELSE", "1")).build();
        assertEquals(List.of("unknown setting airlock.kill.grase; did you mean airlock.kill.grace? (from the settings file " + file + ")"),
                SettingsCheck.unknownKeys(s, KNOWN));
    }
}
