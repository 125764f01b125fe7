package dev.airlock.cli;

import dev.airlock.ConfigurationException;
import dev.airlock.Environments;
import dev.airlock.settings.Settings;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The global options, given before the command: which backend, which config file, explicit values. */
final class SettingsOptions {
    // Named once for picocli and for PlainExecLine, which reads an exec line without it.
    static final String BACKEND = "--backend";
    static final String CONFIG = "--config";
    static final String SET = "--set";
    static final String DEBUG = "--debug";

    @Option(names = BACKEND, paramLabel = "NAME", description = "The backend to use (sets airlock.backend; default local).")
    String backend;

    @Option(names = CONFIG, paramLabel = "FILE", description = "A properties file (default $AIRLOCK_HOME/airlock.properties).")
    Path config;

    @Option(names = SET, paramLabel = "KEY=VALUE", description = "A setting, above every other layer. Repeatable. Not for secrets.")
    List<String> values = new ArrayList<>();

    @Option(names = DEBUG, description = "Debug logs and stack traces on stderr.")
    boolean debug;

    /** Defaults < config file < native variables < AIRLOCK_* variables < system properties < --set and --backend. */
    Settings settings() {
        Map<String, String> explicit = new LinkedHashMap<>();
        for (String kv : values) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                // Not echoed: a mistyped argument may be a secret value.
                throw new ConfigurationException("--set needs KEY=VALUE with a key before '='");
            }
            String key = kv.substring(0, eq).trim();
            if (Settings.isSecretKey(key)) {
                throw new ConfigurationException("--set refuses the secret key " + key
                        + " (argv is visible to every process): export " + Settings.envName(key)
                        + " or put it in the config file");
            }
            explicit.put(key, kv.substring(eq + 1));
        }
        if (backend != null) {
            explicit.put(Environments.BACKEND_KEY, backend);
        }
        return Settings.builder().configFile(config).environment(System.getenv()).systemProperties()
                .values(explicit).valuesFrom(SET).build();
    }
}
