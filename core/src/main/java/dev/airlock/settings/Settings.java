package dev.airlock.settings;

import dev.airlock.ConfigurationException;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Airlock's configuration: one lookup {@code key -> value} over layers, the later winning:
 * defaults &lt; the config file &lt; native variables ({@code DOCKER_HOST}...) &lt; {@code AIRLOCK_*}
 * environment variables &lt; system properties &lt; explicit values.
 *
 * <p>Keys look like {@code airlock.docker.image}. The environment variable for a key is its upper
 * case with dots and dashes as underscores ({@code AIRLOCK_DOCKER_IMAGE}). Maps and lists are
 * {@code prefix.NAME=value} keys, read with {@link #keys(String)}. Immutable.
 */
public final class Settings {
    /** Key suffixes that mark a value as secret. */
    private static final Pattern SECRET_KEY = Pattern.compile(
            "(?i).*(token|secret|password|passphrase|api-key|apikey|credentials)([.-][a-z0-9]+)?$");

    private static final String VALUES_IN_CODE = "the values given in code";

    private final List<Layer> layers; // highest precedence first
    /** The config file that was read, if any: Airlock refuses one that commands could write. */
    private final Optional<Path> configFile;

    /** {@code source} says in words where the layer's value of a key came from, for messages. */
    private record Layer(String name, Function<String, String> lookup, Function<String, Map<String, String>> scan,
                         Function<String, String> source) {
    }

    private Settings(List<Layer> layers) {
        this(layers, Optional.empty());
    }

    private Settings(List<Layer> layers, Optional<Path> configFile) {
        this.layers = List.copyOf(layers);
        this.configFile = configFile;
    }

    /** The config file these settings were read from, if one was. */
    public Optional<Path> configFile() {
        return configFile;
    }

    /**
     * The settings a process sees: the config file ({@code $AIRLOCK_HOME/airlock.properties} when
     * it exists), native variables, {@code AIRLOCK_*} variables and system properties. What a
     * user configured counts only through this; {@link #of} ignores it.
     */
    public static Settings fromProcess() {
        return builder().configFile(null).environment(System.getenv()).systemProperties().build();
    }

    /** No layers at all: every key has its default. */
    public static Settings empty() {
        return new Settings(List.of());
    }

    /**
     * Exactly these values over the defaults, and nothing else: the config file, {@code AIRLOCK_*}
     * variables and {@code -Dairlock.*} system properties are not read. To keep the process's
     * configuration and change a few keys, use {@code Settings.fromProcess().with(key, value)}.
     */
    public static Settings of(Map<String, String> values) {
        return builder().values(values).build();
    }

    /** {@link #of(Map)} from {@code key, value, key, value...}: the process's configuration is not read. */
    public static Settings of(String... keyValues) {
        if (keyValues.length % 2 != 0) {
            throw new IllegalArgumentException("keys and values must come in pairs");
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return of(m);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** These settings with explicit values on top. */
    public Settings with(Map<String, String> values) {
        List<Layer> l = new ArrayList<>();
        l.add(mapLayer("explicit", values, key -> VALUES_IN_CODE));
        l.addAll(layers);
        return new Settings(l, configFile);
    }

    public Settings with(String key, String value) {
        return with(Map.of(key, value));
    }

    /** The value of {@code key}, if any layer has it. */
    public Optional<String> get(String key) {
        for (Layer layer : layers) {
            String v = layer.lookup.apply(key);
            if (v != null) {
                return Optional.of(v);
            }
        }
        return Optional.empty();
    }

    /**
     * The {@code airlock.*} keys set by name in the config file, system properties and explicit
     * values (not through {@code AIRLOCK_*} variables), sorted; for {@link SettingsCheck}.
     */
    public java.util.SortedSet<String> definedKeys() {
        java.util.SortedSet<String> out = new java.util.TreeSet<>();
        for (Layer layer : layers) {
            if (!layer.name.equals("environment") && !layer.name.equals("native variable") && !layer.name.equals("default")) {
                layer.scan.apply("airlock.").keySet().forEach(k -> out.add("airlock." + k));
            }
        }
        return out;
    }

    /** Which layer supplied {@code key} ("explicit", "system property", "environment", "config file"...). */
    public Optional<String> origin(String key) {
        for (Layer layer : layers) {
            if (layer.lookup.apply(key) != null) {
                return Optional.of(layer.name);
            }
        }
        return Optional.empty();
    }

    /**
     * Where the value of {@code key} came from, in words for a message: {@code --set} (or what the
     * builder's {@link Builder#valuesFrom} named), {@code AIRLOCK_X in the environment}, {@code the
     * settings file PATH}...
     */
    public Optional<String> originInWords(String key) {
        for (Layer layer : layers) {
            if (layer.lookup.apply(key) != null) {
                return Optional.of(layer.source.apply(key));
            }
        }
        return Optional.empty();
    }

    public String get(String key, String defaultValue) {
        return get(key).orElse(defaultValue);
    }

    /** The value, or a {@link ConfigurationException} naming the key and how to set it. */
    public String require(String key) {
        return get(key).filter(v -> !v.isBlank()).orElseThrow(() -> new ConfigurationException(
                "setting " + key + " is required: pass --set " + key + "=VALUE, export " + envName(key)
                        + ", or put it in airlock.properties"));
    }

    public boolean getBoolean(String key, boolean defaultValue) {
        Optional<String> v = get(key);
        if (v.isEmpty()) {
            return defaultValue;
        }
        switch (v.get().trim().toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on", "1":
                return true;
            case "false", "no", "off", "0":
                return false;
            default:
                throw invalid(key, v.get(), "true or false");
        }
    }

    public int getInt(String key, int defaultValue) {
        Optional<String> v = get(key);
        if (v.isEmpty()) {
            return defaultValue;
        }
        try {
            return Integer.parseInt(v.get().trim());
        } catch (NumberFormatException e) {
            throw invalid(key, v.get(), "a whole number");
        }
    }

    /** A size: plain bytes or with a suffix {@code k}, {@code m}, {@code g} (binary units). */
    public long getBytes(String key, long defaultValue) {
        Optional<String> v = get(key);
        if (v.isEmpty()) {
            return defaultValue;
        }
        Matcher m = Pattern.compile("(?i)\\s*(\\d+)\\s*([kmg]i?b?|b)?\\s*").matcher(v.get());
        if (!m.matches()) {
            throw invalid(key, v.get(), "a size such as 1048576, 512k, 16m or 1g");
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "" : m.group(2).toLowerCase(Locale.ROOT);
        int shift = unit.startsWith("k") ? 10 : unit.startsWith("m") ? 20 : unit.startsWith("g") ? 30 : 0;
        return n << shift;
    }

    /** A duration: {@code 30s}, {@code 5m}, {@code 2h}, {@code 1500ms}, plain seconds, or ISO-8601. */
    public Optional<Duration> getDuration(String key) {
        return get(key).map(v -> parseDuration(key, v));
    }

    public Duration getDuration(String key, Duration defaultValue) {
        return getDuration(key).orElse(defaultValue);
    }

    /** One of {@code allowed} (case-insensitive), or an error naming the valid values. */
    public String getChoice(String key, String defaultValue, String... allowed) {
        String v = get(key, defaultValue).trim().toLowerCase(Locale.ROOT);
        if (!Arrays.asList(allowed).contains(v)) {
            throw invalid(key, v, "one of " + String.join(", ", allowed));
        }
        return v;
    }

    /** A secret value; redacted wherever it is printed. */
    public Optional<Secret> secret(String key) {
        return get(key).map(Secret::of);
    }

    /**
     * All {@code prefix.NAME=value} entries as {@code NAME -> value}, sorted by name. From
     * environment variables, {@code PREFIX_NAME} is read with NAME as written.
     */
    public Map<String, String> keys(String prefix) {
        String p = prefix.endsWith(".") ? prefix : prefix + ".";
        Map<String, String> out = new TreeMap<>();
        for (int i = layers.size() - 1; i >= 0; i--) { // lowest first, so higher layers overwrite
            out.putAll(layers.get(i).scan.apply(p));
        }
        return Collections.unmodifiableMap(out);
    }

    /** A list: {@code key} as comma-separated values plus every {@code key.N} entry. */
    public List<String> getList(String key) {
        List<String> out = new ArrayList<>();
        get(key).ifPresent(v -> {
            for (String s : v.split(",")) {
                if (!s.isBlank()) {
                    out.add(s.trim());
                }
            }
        });
        out.addAll(keys(key).values());
        return out;
    }

    /** Whether a key names a secret (its last part says token, secret, password, passphrase or api-key). */
    public static boolean isSecretKey(String key) {
        return SECRET_KEY.matcher(key).matches();
    }

    /** The environment variable that sets {@code key}: {@code airlock.docker.image -> AIRLOCK_DOCKER_IMAGE}. */
    public static String envName(String key) {
        return key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    private static ConfigurationException invalid(String key, String value, String expected) {
        String shown = isSecretKey(key) ? "(redacted)" : "'" + value + "'";
        return new ConfigurationException("setting " + key + " has invalid value " + shown + ": expected " + expected);
    }

    static Duration parseDuration(String key, String raw) {
        String v = raw.trim().toLowerCase(Locale.ROOT);
        try {
            if (v.startsWith("p") || v.startsWith("pt")) {
                return Duration.parse(v.toUpperCase(Locale.ROOT));
            }
            Matcher m = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h|d)?").matcher(v);
            if (m.matches()) {
                double n = Double.parseDouble(m.group(1));
                String u = m.group(2) == null ? "s" : m.group(2);
                double millis = switch (u) {
                    case "ms" -> n;
                    case "s" -> n * 1000;
                    case "m" -> n * 60_000;
                    case "h" -> n * 3_600_000;
                    default -> n * 86_400_000;
                };
                return Duration.ofMillis(Math.round(millis));
            }
        } catch (DateTimeParseException | NumberFormatException ignored) {
            // fall through to the error below
        }
        throw invalid(key, raw, "a duration such as 30s, 5m, 2h or 1500ms");
    }

    private static Layer mapLayer(String name, Map<String, String> values, Function<String, String> source) {
        Map<String, String> copy = Map.copyOf(values);
        return new Layer(name, copy::get, p -> {
            Map<String, String> out = new LinkedHashMap<>();
            copy.forEach((k, v) -> {
                if (k.startsWith(p) && k.length() > p.length()) {
                    out.put(k.substring(p.length()), v);
                }
            });
            return out;
        }, source);
    }

    /** Builds layered settings; layers added here sit at their fixed precedence whatever the call order. */
    public static final class Builder {
        private final Map<String, String> defaults = new LinkedHashMap<>();
        private final Map<String, String> file = new LinkedHashMap<>();
        private final Map<String, String> nativeVars = new LinkedHashMap<>();
        private Map<String, String> environment = Map.of();
        private final Map<String, String> system = new LinkedHashMap<>();
        private final Map<String, String> explicit = new LinkedHashMap<>();
        private String explicitSource = VALUES_IN_CODE;
        private boolean loadDefaultFile;
        private Path configFile;

        private Builder() {
        }

        public Builder defaults(Map<String, String> values) {
            defaults.putAll(values);
            return this;
        }

        /**
         * Reads a properties file (UTF-8). {@code null} means {@code $AIRLOCK_HOME/airlock.properties}
         * if it exists. A file that was named but cannot be read is an error.
         */
        public Builder configFile(Path path) {
            if (path == null) {
                loadDefaultFile = true;
            } else {
                configFile = path;
            }
            return this;
        }

        /** The process environment: {@code AIRLOCK_*} variables and native ones mapped by {@link #nativeVariable}. */
        public Builder environment(Map<String, String> env) {
            this.environment = Map.copyOf(env);
            return this;
        }

        /** Maps a service's own variable (e.g. {@code DOCKER_HOST}) to a key, below {@code AIRLOCK_*} variables. */
        public Builder nativeVariable(String key, String variable) {
            nativeVars.put(key, variable);
            return this;
        }

        public Builder systemProperties() {
            System.getProperties().forEach((k, v) -> {
                if (k.toString().startsWith("airlock.")) {
                    system.put(k.toString(), v.toString());
                }
            });
            return this;
        }

        public Builder values(Map<String, String> values) {
            explicit.putAll(values);
            return this;
        }

        /** How messages name where the explicit values came from, e.g. {@code --set} for a command line. */
        public Builder valuesFrom(String source) {
            this.explicitSource = source;
            return this;
        }

        public Builder value(String key, String value) {
            explicit.put(key, value);
            return this;
        }

        public Settings build() {
            List<Layer> layers = new ArrayList<>();
            String explicitFrom = explicitSource;
            layers.add(mapLayer("explicit", explicit, key -> explicitFrom));
            layers.add(mapLayer("system property", system, key -> "-D" + key));
            Map<String, String> env = environment;
            layers.add(new Layer("environment", key -> env.get(envName(key)), p -> {
                String ep = envName(p);
                Map<String, String> out = new LinkedHashMap<>();
                env.forEach((k, v) -> {
                    if (k.startsWith(ep) && k.length() > ep.length()) {
                        out.put(k.substring(ep.length()), v);
                    }
                });
                return out;
            }, key -> envName(key) + " in the environment"));
            Map<String, String> natives = Map.copyOf(nativeVars);
            layers.add(new Layer("native variable", key -> {
                String var = natives.get(key);
                return var == null ? null : env.get(var);
            }, p -> Map.of(), key -> natives.get(key) + " in the environment"));
            Map<String, String> fileValues = new LinkedHashMap<>(file);
            Path path = configFile;
            if (path == null && loadDefaultFile) {
                Path candidate = AirlockHome.resolve(env).resolve("airlock.properties");
                path = Files.isRegularFile(candidate) ? candidate : null;
            }
            if (path != null) {
                fileValues.putAll(readProperties(path));
            }
            Path read = path;
            layers.add(mapLayer("config file", fileValues, key -> "the settings file " + read));
            layers.add(mapLayer("default", defaults, key -> "the defaults"));
            return new Settings(layers, Optional.ofNullable(path).map(Path::toAbsolutePath));
        }

        private static Map<String, String> readProperties(Path path) {
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
                p.load(r);
            } catch (IOException e) {
                throw new ConfigurationException("cannot read config file " + path + ": " + e.getMessage());
            }
            Map<String, String> out = new LinkedHashMap<>();
            p.forEach((k, v) -> out.put(k.toString(), v.toString()));
            return out;
        }
    }
}
