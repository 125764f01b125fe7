package dev.airlock.emulator;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EmulatorCredentialsTest {
    @Test
    void aVariableSetInTheEnvironmentIsTakenAndNeverDescribedByValue() {
        EmulatorCredentials c = EmulatorCredentials.from(Map.of("SVC_TOKEN", "from-env-4a1b", "SVC_TEAM", " "))
                .variable("SVC_TOKEN", "tk-").variable("SVC_TEAM", "team_").build();
        assertEquals("from-env-4a1b", c.value("SVC_TOKEN"));
        assertTrue(c.fromEnvironment("SVC_TOKEN") && !c.fromEnvironment("SVC_TEAM"), "a blank variable counts as unset");
        assertTrue(c.value("SVC_TEAM").matches("team_[A-Za-z0-9]{24}"), c.value("SVC_TEAM"));
        assertEquals(List.of("SVC_TOKEN from the environment", "SVC_TEAM=" + c.value("SVC_TEAM")), c.describe());
        assertFalse(c.toString().contains("from-env-4a1b") || c.toString().contains(c.value("SVC_TEAM")), c.toString());
        assertTrue(c.accepts("SVC_TOKEN", "from-env-4a1b"));
        assertFalse(c.accepts("SVC_TOKEN", "from-env-4a1") || c.accepts("SVC_TOKEN", "from-env-4a1b ") || c.accepts("SVC_TOKEN", null));
    }

    @Test
    void madeValuesDifferEachStart() {
        EmulatorCredentials a = EmulatorCredentials.from(Map.of()).variable("K", "k-").build();
        EmulatorCredentials b = EmulatorCredentials.from(Map.of()).variable("K", "k-").build();
        assertNotEquals(a.value("K"), b.value("K"));
        assertEquals(Map.of("K", a.value("K")), a.asEnvironment());
    }
}
