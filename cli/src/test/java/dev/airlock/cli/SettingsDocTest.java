package dev.airlock.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code docs/settings.md} is exactly what {@link SettingsDoc} renders from the declared keys. */
class SettingsDocTest {
    private static final Path ROOT = ReadmeTest.ROOT;

    @Test
    void docsSettingsMdMatchesTheDeclaredKeys() throws IOException {
        ClassLoader loader = SettingsDocTest.class.getClassLoader();
        if (Boolean.getBoolean(SettingsDoc.WRITE_PROPERTY)) {
            SettingsDoc.write(ROOT, loader);
        }
        Path file = ROOT.resolve(SettingsDoc.FILE);
        String expected = SettingsDoc.render(loader);
        String actual = Files.exists(file) ? Files.readString(file) : "";
        assertEquals(expected, actual, SettingsDoc.FILE + " is out of date with the declared SettingKeys;"
                + " regenerate it from the repository root with: " + SettingsDoc.REGENERATE);
    }

    @Test
    void everyBackendOfThisBuildHasItsSection() {
        String doc = SettingsDoc.render(SettingsDocTest.class.getClassLoader());
        for (String backend : new String[] {"local", "docker", "ssh", "modal", "daytona", "vercel"}) {
            assertTrue(doc.contains("## Backend `" + backend + "`"), backend + "'s section");
        }
        assertTrue(doc.contains("| `airlock.backend` |"), "the core's keys");
    }
}
