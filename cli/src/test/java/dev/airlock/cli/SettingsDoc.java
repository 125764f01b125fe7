package dev.airlock.cli;

import dev.airlock.Environments;
import dev.airlock.settings.CoreSettingKeys;
import dev.airlock.settings.SettingKey;
import dev.airlock.spi.EnvironmentProvider;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Renders {@code docs/settings.md} from the declared {@link SettingKey}s: the core's
 * ({@link CoreSettingKeys#ALL}) and those of each backend on the class path, by backend name.
 * {@link SettingsDocTest} fails when the file differs; {@link #REGENERATE} rewrites it.
 */
final class SettingsDoc {
    static final Path FILE = Path.of("docs/settings.md");
    static final String WRITE_PROPERTY = "airlock.settings-doc.write";
    static final String REGENERATE = "./mvnw -q -pl cli -am test -Dtest=SettingsDocTest"
            + " -Dsurefire.failIfNoSpecifiedTests=false -D" + WRITE_PROPERTY + "=true";

    private SettingsDoc() {
    }

    static String render(ClassLoader loader) {
        StringBuilder out = new StringBuilder();
        out.append("# Settings\n\n")
                .append("<!-- Generated from the declared SettingKeys by cli/src/test/java/dev/airlock/cli/SettingsDoc.java;\n")
                .append("     do not edit. Regenerate: ").append(REGENERATE).append(" -->\n\n")
                .append("Every setting Airlock reads, as the core and each backend declare it. How values are looked up\n")
                .append("(the config file, `AIRLOCK_*` variables, `-D`, `--set`) and what each setting does in detail:\n")
                .append("[backends](backends.md#choosing-a-backend-by-configuration). A key ending in `.NAME` stands for a\n")
                .append("family of map entries (`airlock.docker.env.NAME`); a secret key is refused by `--set` and\n")
                .append("printed redacted.\n");
        section(out, "Core (every backend)", CoreSettingKeys.ALL);
        for (Map.Entry<String, EnvironmentProvider> p : Environments.providers(loader).entrySet()) {
            section(out, "Backend `" + p.getKey() + "` (`airlock.backend=" + p.getKey() + "`)", p.getValue().settingKeys());
        }
        return out.toString();
    }

    private static void section(StringBuilder out, String title, List<SettingKey> keys) {
        out.append("\n## ").append(title).append("\n\n");
        if (keys.isEmpty()) {
            out.append("No settings of its own.\n");
            return;
        }
        out.append("| key | type | default | secret | meaning |\n|---|---|---|---|---|\n");
        for (SettingKey k : keys) {
            out.append("| `").append(k.key()).append("` | ").append(cell(k.type())).append(" | ")
                    .append(k.defaultValue().isEmpty() ? "" : "`" + k.defaultValue().replace("|", "\\|") + "`")
                    .append(" | ").append(k.secret() ? "**yes**" : "").append(" | ").append(cell(k.meaning())).append(" |\n");
        }
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }

    /** Writes the file under {@code root} (the repository). */
    static void write(Path root, ClassLoader loader) throws IOException {
        Files.writeString(root.resolve(FILE), render(loader));
    }
}
