package dev.airlock.local;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code airlock.local.workdir} is where commands start, with or without bubblewrap. */
class WorkdirTest {

    @Test
    void commandsStartInTheWorkdirWithoutBubblewrap(@TempDir Path project) throws Exception {
        Path real = project.toRealPath();
        try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.local.isolation", "none",
                "airlock.local.workdir", real.toString()))) {
            assertEquals(real + "\n", env.exec(ExecRequest.of("pwd -P; touch here")).stdout().text());
            assertTrue(Files.exists(real.resolve("here")), "a relative path lands in the workdir");
            assertEquals("/\n", env.exec(ExecRequest.builder("pwd").cwd("/").build()).stdout().text(), "a request's cwd still wins");
        }
    }

    @Test
    void noneStartsInTheChildrensHome() {
        try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.local.workdir", "none"))) {
            assertEquals(env.target().home() + "\n", env.exec(ExecRequest.of("pwd")).stdout().text());
        }
    }

    @Test
    void aMissingWorkdirIsOneClearError(@TempDir Path dir) {
        String missing = dir.resolve("missing").toString();
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> Environments.open(
                Settings.of("airlock.container", "no", "airlock.local.workdir", missing)).close());
        assertTrue(e.getMessage().contains("airlock.local.workdir") && e.getMessage().contains(missing), e.getMessage());
    }
}
