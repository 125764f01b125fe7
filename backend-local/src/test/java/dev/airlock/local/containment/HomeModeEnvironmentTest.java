package dev.airlock.local.containment;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which HOME, AIRLOCK_* and TMPDIR the children of a local environment get, by setting. */
class HomeModeEnvironmentTest {
    private final Path realHome = Operator.home();
    private final Path profileHome = realHome.resolve(".airlock/home");

    @AfterEach
    void removeProfileHome() {
        Operator.deleteTree(realHome.resolve(".airlock"));
    }

    private static String sh(Environment env, String command) {
        ExecResult r = env.exec(ExecRequest.of(command));
        assertEquals(0, r.exitCode(), () -> command + ": " + r.stderr().text());
        return r.stdout().text();
    }

    @Test
    void autoOnAHostKeepsTheRealHome() {
        try (Environment env = Environments.open(Settings.of("airlock.local.isolation", "none", "airlock.container", "no"))) {
            assertEquals(realHome + "|" + realHome, sh(env, "printf '%s|%s' \"$HOME\" \"$AIRLOCK_REAL_HOME\""));
            assertEquals(realHome.toString(), env.target().home());
            assertFalse(env.target().container());
            assertEquals("airlock.container=no", env.target().containerSignal());
        }
        assertFalse(Files.exists(profileHome), "no profile home is made on a host in auto mode");
    }

    @Test
    void autoInAContainerUsesTheProfileHomeAndTildeFollowsIt() throws Exception {
        try (Environment env = Environments.open(Settings.of("airlock.local.isolation", "none", "airlock.container", "yes"))) {
            assertEquals(profileHome + "|" + realHome + "|" + realHome.resolve(".airlock"),
                    sh(env, "printf '%s|%s|%s' \"$HOME\" \"$AIRLOCK_REAL_HOME\" \"$AIRLOCK_HOME\""));
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(profileHome)));
            env.files().write("~/notes/a.txt", "from the agent".getBytes(StandardCharsets.UTF_8));
            assertEquals("from the agent", Files.readString(profileHome.resolve("notes/a.txt")));
            assertFalse(Files.exists(realHome.resolve("notes")));
            ExecResult r = env.exec(ExecRequest.builder("pwd; cat notes/a.txt").cwd("~").build());
            assertEquals(profileHome + "\nfrom the agent", r.stdout().text());
        }
    }

    @Test
    void theContainerSignalDecidesAutoWhenNotOverridden() {
        try (Environment env = Environments.open(Settings.of("airlock.local.isolation", "none", "airlock.container", "auto"))) {
            boolean container = env.target().container();
            assertEquals(container ? profileHome.toString() : realHome.toString(), env.target().home(),
                    "auto follows " + env.target().containerSignal());
        }
    }

    @ParameterizedTest
    @CsvSource({"profile, no, true", "isolated, no, true", "profile_home, no, true", "profile-home, no, true",
            "real, yes, false", "host, yes, false", "user, yes, false", "real_home, yes, false", "real-home, yes, false",
            "auto, no, false", "auto, yes, true"})
    void everyAliasThroughTheEnvironmentVariable(String mode, String container, boolean profile) {
        Settings s = Settings.builder().environment(Map.of("AIRLOCK_HOME_MODE", mode))
                .values(Map.of("airlock.container", container, "airlock.local.isolation", "none")).build();
        try (Environment env = Environments.open(s)) {
            assertEquals(profile ? profileHome.toString() : realHome.toString(), sh(env, "printf %s \"$HOME\""));
        }
    }

    @Test
    void airlockHomeMovesTheProfileHome() {
        Path state = realHome.resolve(".airlock/elsewhere");
        try (Environment env = Environments.open(Settings.of("airlock.local.isolation", "none", "airlock.container", "no", "airlock.home-mode", "profile",
                "airlock.home", state.toString()))) {
            assertEquals(state + "/home|" + state, sh(env, "printf '%s|%s' \"$HOME\" \"$AIRLOCK_HOME\""));
        }
    }

    @Test
    void unknownValuesFailBeforeAnythingRuns() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.open(
                Settings.of("airlock.local.isolation", "none", "airlock.container", "no", "airlock.home-mode", "jail")));
        assertTrue(e.getMessage().contains("'jail'") && e.getMessage().contains("profile-home"), e.getMessage());
        ConfigurationException c = assertThrows(ConfigurationException.class, () -> Environments.open(
                Settings.of("airlock.local.isolation", "none", "airlock.container", "perhaps")));
        assertTrue(c.getMessage().contains("auto, yes, no"), c.getMessage());
    }

    @Test
    void childrenGetAPrivateScratchDirRemovedOnClose() throws Exception {
        Path scratch;
        try (Environment env = Environments.open(Settings.of("airlock.local.isolation", "none", "airlock.container", "no"))) {
            scratch = Path.of(env.target().scratchDir());
            String v = sh(env, "printf '%s|%s|%s' \"$TMPDIR\" \"$TMP\" \"$TEMP\"");
            assertEquals(scratch + "|" + scratch + "|" + scratch, v);
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(scratch)));
            String made = sh(env, "mktemp -d").trim();
            assertTrue(made.startsWith(scratch + "/"), made);
            assertEquals("/mine", env.exec(ExecRequest.builder("printf %s \"$TMPDIR\"").env("TMPDIR", "/mine").build())
                    .stdout().text(), "a TMPDIR the caller sets is kept");
        }
        assertFalse(Files.exists(scratch), "the scratch dir is removed on close");
    }
}
