package dev.airlock.settings;

import dev.airlock.ConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SettingsTest {
    @TempDir
    Path dir;

    @Test
    void laterLayersWin() throws Exception {
        Path file = dir.resolve("airlock.properties");
        Files.writeString(file, "airlock.a=file\nairlock.b=file\nairlock.c=file\nairlock.d=file\nairlock.docker.host=file\n");
        Settings s = Settings.builder()
                .defaults(Map.of("airlock.a", "default", "airlock.z", "default"))
                .configFile(file)
                .nativeVariable("airlock.docker.host", "DOCKER_HOST")
                .environment(Map.of("AIRLOCK_B", "env", "AIRLOCK_C", "env", "DOCKER_HOST", "native"))
                .values(Map.of("airlock.c", "explicit"))
                .build();
        assertEquals("file", s.get("airlock.a").orElseThrow());
        assertEquals("env", s.get("airlock.b").orElseThrow());
        assertEquals("explicit", s.get("airlock.c").orElseThrow());
        assertEquals("file", s.get("airlock.d").orElseThrow());
        assertEquals("native", s.get("airlock.docker.host").orElseThrow());
        assertEquals("default", s.get("airlock.z").orElseThrow());
        assertEquals("environment", s.origin("airlock.b").orElseThrow());
        assertEquals("AIRLOCK_B in the environment", s.originInWords("airlock.b").orElseThrow());
        assertEquals("DOCKER_HOST in the environment", s.originInWords("airlock.docker.host").orElseThrow());
        assertEquals("the settings file " + file, s.originInWords("airlock.d").orElseThrow());
        assertEquals("the values given in code", s.originInWords("airlock.c").orElseThrow());
        assertEquals("the defaults", s.originInWords("airlock.z").orElseThrow());
    }

    @Test
    void theDefaultConfigFileLivesInAirlockHome() throws Exception {
        Files.writeString(dir.resolve("airlock.properties"), "airlock.backend=docker\n");
        Settings s = Settings.builder().configFile(null).environment(Map.of("AIRLOCK_HOME", dir.toString())).build();
        assertEquals("docker", s.get("airlock.backend").orElseThrow());
    }

    @Test
    void keysReadMapsFromEveryLayer() {
        Settings s = Settings.builder()
                .environment(Map.of("AIRLOCK_DOCKER_ENV_FOO", "from-env", "AIRLOCK_DOCKER_ENVX", "no"))
                .values(Map.of("airlock.docker.env.BAR", "x=y", "airlock.docker.env.FOO", "explicit"))
                .build();
        assertEquals(Map.of("FOO", "explicit", "BAR", "x=y"), s.keys("airlock.docker.env"));
    }

    @Test
    void typedValuesAndClearErrors() {
        Settings s = Settings.of("airlock.t", "1500ms", "airlock.m", "5m", "airlock.b", "16m", "airlock.x", "maybe",
                "airlock.l", "a, b ,c");
        assertEquals(Duration.ofMillis(1500), s.getDuration("airlock.t").orElseThrow());
        assertEquals(Duration.ofMinutes(5), s.getDuration("airlock.m").orElseThrow());
        assertEquals(16L << 20, s.getBytes("airlock.b", 0));
        assertEquals(List.of("a", "b", "c"), s.getList("airlock.l"));
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> s.getBoolean("airlock.x", false));
        assertEquals("setting airlock.x has invalid value 'maybe': expected true or false", e.getMessage());
        ConfigurationException req = assertThrows(ConfigurationException.class, () -> s.require("airlock.docker.image"));
        assertTrue(req.getMessage().contains("AIRLOCK_DOCKER_IMAGE"), req.getMessage());
    }

    @Test
    void secretsAreRedactedEverywhere() {
        Settings s = Settings.of("airlock.modal.token-secret", "hunter2");
        Secret secret = s.secret("airlock.modal.token-secret").orElseThrow();
        assertEquals("hunter2", secret.reveal());
        assertFalse(secret.toString().contains("hunter2"));
        assertTrue(Settings.isSecretKey("airlock.modal.token-secret"));
        assertTrue(Settings.isSecretKey("airlock.ssh.passphrase"));
        assertTrue(Settings.isSecretKey("airlock.daytona.api-key"));
        assertFalse(Settings.isSecretKey("airlock.docker.image"));
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> s.getInt("airlock.modal.token-secret", 0));
        assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
    }
}
