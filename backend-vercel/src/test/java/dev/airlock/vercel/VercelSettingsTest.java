package dev.airlock.vercel;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The team and project come from Vercel's own variables, as its sandbox docs pass them to the SDK; a setting wins. */
class VercelSettingsTest {

    @Test
    void theTeamAndProjectComeFromVercelsVariablesUnlessSet() {
        Map<String, String> env = Map.of("VERCEL_TEAM_ID", "team_env", "VERCEL_PROJECT_ID", "prj_env");
        VercelSettings fromEnv = VercelSettings.from(Settings.empty(), env);
        assertEquals(Optional.of("team_env"), fromEnv.teamId());
        assertEquals("prj_env", fromEnv.requireProject());
        VercelSettings set = VercelSettings.from(Settings.of(VercelSettings.TEAM_ID, "team_set", VercelSettings.PROJECT_ID, "prj_set"), env);
        assertEquals(Optional.of("team_set"), set.teamId());
        assertEquals("prj_set", set.requireProject());
    }

    @Test
    void noProjectIsOneLineSayingHowToGiveIt() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> VercelSettings.from(Settings.empty(), Map.of()).requireProject());
        assertEquals("no Vercel project: export VERCEL_PROJECT_ID or set airlock.vercel.project-id (the project the sandboxes"
                + " belong to, prj_...)", e.getMessage());
    }
}
