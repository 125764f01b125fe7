package dev.airlock.containment;

import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ContainmentTest {
    private static final Map<String, String> FACTS = Map.of("path", "/usr/bin:/bin");

    private static Containment plan(boolean container, String... settings) {
        return Containment.plan(ContainmentSettings.from(Settings.of(settings)), "/home/op", FACTS, container, "signal");
    }

    @Test
    void autoKeepsTheRealHomeOnAHostAndUsesTheProfileHomeInAContainer() {
        assertEquals("/home/op", plan(false).home());
        assertFalse(plan(false).profileHome());
        assertEquals("/home/op/.airlock/home", plan(true).home());
        assertTrue(plan(true).homeReason().contains("container"), plan(true).homeReason());
    }

    @Test
    void profileAndRealPinTheHomeWhateverTheContainerVerdict() {
        assertEquals("/home/op/.airlock/home", plan(false, "airlock.home-mode", "profile").home());
        assertEquals("/home/op", plan(true, "airlock.home-mode", "real").home());
        assertEquals("/srv/a/home", plan(false, "airlock.home-mode", "isolated", "airlock.home", "/srv/a").home());
    }

    @Test
    void theTargetsOwnAirlockHomeIsUsedUnlessOneIsConfigured() {
        Map<String, String> facts = Map.of("airlock_home", "/opt/airlock-state", "path", "/bin");
        ContainmentSettings s = ContainmentSettings.from(Settings.of("airlock.home-mode", "profile"));
        assertEquals("/opt/airlock-state/home", Containment.plan(s, "/root", facts, false, "x").home());
        ContainmentSettings explicit = ContainmentSettings.from(Settings.of("airlock.home-mode", "profile", "airlock.home", "/x"));
        assertEquals("/x/home", Containment.plan(explicit, "/root", facts, false, "x").home());
    }

    @Test
    void childrenGetTheRealHomeTheScratchDirAndTheirOwnValuesWin() {
        Map<String, String> v = plan(true).childVariables("/tmp/airlock-1/tmp", Map.of("TMPDIR", "/mine", "FOO", "bar"));
        assertEquals("/home/op", v.get("AIRLOCK_REAL_HOME"));
        assertEquals("/home/op/.airlock", v.get("AIRLOCK_HOME"));
        assertEquals("/home/op/.airlock/home", v.get("HOME"));
        assertEquals("/mine", v.get("TMPDIR"));
        assertEquals("/tmp/airlock-1/tmp", v.get("TMP"));
        assertEquals("/tmp/airlock-1/tmp", v.get("TEMP"));
        assertEquals("bar", v.get("FOO"));
        assertFalse(v.containsKey("PATH"));
    }

    @Test
    void evalPutsEverythingInTheRunDirAndTheShimsFirstOnPath() {
        Containment c = plan(false, "airlock.profile", "eval", "airlock.run-dir", "/runs/1");
        assertEquals(Optional.of("/runs/1/bin"), c.shimDir());
        Map<String, String> v = c.childVariables("/runs/1/tmp/airlock-x/tmp", Map.of());
        assertEquals("/runs/1/home", v.get("HOME"));
        assertEquals("/runs/1/airlock", v.get("AIRLOCK_HOME"));
        assertEquals("/home/op", v.get("AIRLOCK_REAL_HOME"));
        assertEquals("/runs/1/tmp", v.get("TMPDIR"));
        assertEquals("/runs/1/bin:/usr/bin:/bin", v.get("PATH"));
        assertEquals("/runs/1/bin:/opt/bin", c.childVariables("s", Map.of("PATH", "/opt/bin")).get("PATH"));
        assertEquals("/runs/1/bin:/opt/bin", c.childVariables("s", Map.of("PATH", "/runs/1/bin:/opt/bin")).get("PATH"));
    }
}
