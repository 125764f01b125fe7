package dev.airlock.daytona;

import dev.airlock.ConfigurationException;
import dev.airlock.NetworkAllowlist;
import dev.airlock.NetworkMode;
import dev.airlock.settings.Secret;
import dev.airlock.settings.Settings;

import java.net.URI;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code daytona} backend's settings (the table in docs/backends.md). The api key is a
 * {@link Secret}; {@code DAYTONA_API_KEY} and {@code DAYTONA_API_URL} are honoured below the
 * {@code airlock.daytona.*} keys, as the official SDKs read them.
 */
public record DaytonaSettings(URI apiUrl, Secret apiKey, Optional<String> target, Optional<String> image,
                              Optional<String> snapshot, Optional<Integer> cpu, Optional<Integer> memory,
                              Optional<Integer> disk, Map<String, String> env, Map<String, String> labels,
                              int autoStopMinutes, int autoDeleteMinutes, Optional<String> sandboxId,
                              Duration startTimeout, NetworkMode network, Duration previewExpiry,
                              List<NetworkAllowlist.Entry> allowed) {
    public static final String PREFIX = "airlock.daytona";
    public static final String API_URL = PREFIX + ".api-url";
    public static final String API_KEY = PREFIX + ".api-key";
    public static final String TARGET = PREFIX + ".target";
    public static final String IMAGE = PREFIX + ".image";
    public static final String SNAPSHOT = PREFIX + ".snapshot";
    public static final String CPU = PREFIX + ".cpu";
    public static final String MEMORY = PREFIX + ".memory";
    public static final String DISK = PREFIX + ".disk";
    public static final String ENV = PREFIX + ".env";
    public static final String LABELS = PREFIX + ".labels";
    public static final String AUTO_STOP = PREFIX + ".auto-stop";
    public static final String AUTO_DELETE = PREFIX + ".auto-delete";
    public static final String SANDBOX_ID = PREFIX + ".sandbox-id";
    public static final String START_TIMEOUT = PREFIX + ".start-timeout";
    /** How long a port's signed preview URL answers ({@code expiresInSeconds}); the service's own default is 60 s. */
    public static final String PREVIEW_EXPIRY = PREFIX + ".preview-expiry";
    public static final Duration DEFAULT_PREVIEW_EXPIRY = Duration.ofHours(1);
    public static final String DAYTONA_API_URL = "DAYTONA_API_URL";
    public static final String DAYTONA_API_KEY = "DAYTONA_API_KEY";
    public static final String DEFAULT_API_URL = "https://app.daytona.io/api";

    public DaytonaSettings {
        env = Map.copyOf(env);
        labels = Map.copyOf(labels);
        allowed = List.copyOf(allowed);
    }

    /**
     * {@code off} is the create's {@code networkBlockAll}; {@code allowlist} its
     * {@code networkAllowList} (ranges) and {@code domainAllowList} (host names), on every port.
     */
    public static final Set<NetworkMode> NETWORK_MODES = EnumSet.allOf(NetworkMode.class);

    public static DaytonaSettings from(Settings s, Map<String, String> processEnv) {
        NetworkMode network = NetworkMode.require(s, "daytona", NETWORK_MODES); // before anything is created
        String url = s.get(API_URL).or(() -> Optional.ofNullable(processEnv.get(DAYTONA_API_URL)))
                .filter(v -> !v.isBlank()).orElse(DEFAULT_API_URL).trim();
        URI api;
        try {
            api = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(API_URL + " '" + url + "' is not a URL; set it like " + DEFAULT_API_URL);
        }
        if (!"http".equals(api.getScheme()) && !"https".equals(api.getScheme())) {
            throw new ConfigurationException(API_URL + " '" + url + "' must start with https:// (or http:// for an emulator)");
        }
        Optional<Secret> key = s.secret(API_KEY).or(() -> Optional.ofNullable(processEnv.get(DAYTONA_API_KEY))
                .filter(v -> !v.isBlank()).map(Secret::of));
        if (key.isEmpty()) {
            throw new ConfigurationException("no Daytona api key: set " + DAYTONA_API_KEY + " (or " + API_KEY
                    + " in the config file)");
        }
        Optional<String> image = s.get(IMAGE).filter(v -> !v.isBlank());
        Optional<String> snapshot = s.get(SNAPSHOT).filter(v -> !v.isBlank());
        if (image.isPresent() && snapshot.isPresent()) {
            throw new ConfigurationException("set one of " + IMAGE + " and " + SNAPSHOT + ", not both");
        }
        Optional<Integer> cpu = positive(s, CPU);
        Optional<Integer> memory = positive(s, MEMORY);
        Optional<Integer> disk = positive(s, DISK);
        if (image.isEmpty() && (cpu.isPresent() || memory.isPresent() || disk.isPresent())) {
            throw new ConfigurationException(CPU + ", " + MEMORY + " and " + DISK + " need " + IMAGE
                    + " (Daytona refuses resources for a snapshot)");
        }
        int autoStop = s.getInt(AUTO_STOP, 15);
        int autoDelete = s.getInt(AUTO_DELETE, 0);
        if (autoStop < 0 || autoDelete < -1) {
            throw new ConfigurationException(AUTO_STOP + " must be >= 0 minutes and " + AUTO_DELETE + " >= -1 (-1 = never)");
        }
        return new DaytonaSettings(api, key.get(), s.get(TARGET).filter(v -> !v.isBlank()), image, snapshot, cpu, memory,
                disk, s.keys(ENV), s.keys(LABELS), autoStop, autoDelete, s.get(SANDBOX_ID).filter(v -> !v.isBlank()),
                s.getDuration(START_TIMEOUT, Duration.ofMinutes(5)), network, previewExpiry(s),
                network == NetworkMode.ALLOWLIST ? NetworkAllowlist.from(s).onEveryPort("daytona", true) : List.of());
    }

    private static Duration previewExpiry(Settings s) {
        Duration d = s.getDuration(PREVIEW_EXPIRY, DEFAULT_PREVIEW_EXPIRY);
        if (d.toSeconds() < 1) {
            throw new ConfigurationException(PREVIEW_EXPIRY + " must be at least 1s (a signed preview URL's life, like 1h)");
        }
        return d;
    }

    private static Optional<Integer> positive(Settings s, String key) {
        if (s.get(key).isEmpty()) {
            return Optional.empty();
        }
        int v = s.getInt(key, 0);
        if (v <= 0) {
            throw new ConfigurationException(key + " must be a positive whole number");
        }
        return Optional.of(v);
    }
}
