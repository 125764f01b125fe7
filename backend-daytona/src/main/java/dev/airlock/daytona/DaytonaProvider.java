package dev.airlock.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.DeniedException;
import dev.airlock.Environment;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.settings.SettingKey;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.ResourceLabels;
import dev.airlock.spi.SandboxLifecycle;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The {@code daytona} backend: sandboxes on Daytona's REST API, plus {@code up}, {@code down} and {@code gc}. */
public final class DaytonaProvider implements EnvironmentProvider, SandboxLifecycle {

    @Override
    public String name() {
        return "daytona";
    }

    @Override
    public Availability check(Settings settings) {
        DaytonaSettings s;
        try {
            s = DaytonaSettings.from(settings, System.getenv());
        } catch (AirlockException e) {
            return Availability.unavailable(e.getMessage());
        }
        try (DaytonaApi api = new DaytonaApi(s, settings)) {
            api.list(ResourceLabels.selector(DaytonaBackend.LABEL_PREFIX));
        } catch (AirlockException e) {
            return Availability.unavailable(e.getMessage());
        }
        return Availability.ok("Daytona at " + s.apiUrl() + s.sandboxId().map(id -> ", attaching to sandbox " + id).orElse(""));
    }

    @Override
    public Environment open(OpenContext context) {
        return DaytonaBackend.open(context, DaytonaSettings.from(context.settings(), System.getenv()));
    }

    @Override
    public java.util.Set<String> secretVariables() {
        return java.util.Set.of(DaytonaSettings.DAYTONA_API_KEY);
    }

    /** The table in docs/backends.md (and docs/settings.md, generated from these), as the core checks it. */
    @Override
    public List<SettingKey> settingKeys() {
        return List.of(
                SettingKey.of(DaytonaSettings.API_URL, "URL", "DAYTONA_API_URL, else " + DaytonaSettings.DEFAULT_API_URL, "the control API"),
                SettingKey.secret(DaytonaSettings.API_KEY, "string", "the API key (DAYTONA_API_KEY)"),
                SettingKey.of(DaytonaSettings.TARGET, "string", "the organisation's default", "region"),
                SettingKey.of(DaytonaSettings.IMAGE, "image name", "", "build from FROM <image>"),
                SettingKey.of(DaytonaSettings.SNAPSHOT, "string", "Daytona's default", "create from a snapshot"),
                SettingKey.of(DaytonaSettings.CPU, "cores", "Daytona's", "CPU (only with an image)"),
                SettingKey.of(DaytonaSettings.MEMORY, "GB", "Daytona's", "memory (only with an image)"),
                SettingKey.of(DaytonaSettings.DISK, "GB", "Daytona's", "disk (only with an image)"),
                SettingKey.of(DaytonaSettings.ENV + SettingKey.NAME, "string", "", "sandbox variables"),
                SettingKey.of(DaytonaSettings.LABELS + SettingKey.NAME, "string", "", "extra labels"),
                SettingKey.of(DaytonaSettings.AUTO_STOP, "minutes", "15", "auto-stop interval (0 = never)"),
                SettingKey.of(DaytonaSettings.AUTO_DELETE, "minutes", "0", "auto-delete interval (-1 = never)"),
                SettingKey.of(DaytonaSettings.SANDBOX_ID, "sandbox id", "", "attach; never stopped on close"),
                SettingKey.of(DaytonaSettings.START_TIMEOUT, "duration", "5m", "how long to wait for started"),
                SettingKey.of(DaytonaSettings.PREVIEW_EXPIRY, "duration", "1h", "how long a port's signed preview URL answers"));
    }

    @Override
    public String attachKey() {
        return DaytonaSettings.SANDBOX_ID;
    }

    /** Creates a kept sandbox (labelled {@code airlock.keep}, never auto-deleted) and waits until it started. */
    @Override
    public String up(Settings settings, Duration ttl) {
        // Daytona stops a sandbox after this many minutes without activity (its auto-stop interval).
        long minutes = Math.max(1, (ttl.toSeconds() + 59) / 60);
        DaytonaSettings s = DaytonaSettings.from(settings.with(DaytonaSettings.AUTO_STOP, Long.toString(minutes)), System.getenv());
        try (DaytonaApi api = new DaytonaApi(s, settings)) {
            JsonNode r = api.create(DaytonaBackend.createBody(api, s, true));
            String id = r.path("id").asText();
            try {
                DaytonaBackend.awaitStarted(api, id, r, s.startTimeout());
            } catch (RuntimeException e) {
                DaytonaBackend.remove(api, id);
                throw e;
            }
            return id;
        }
    }

    @Override
    public void down(Settings settings, String id) {
        if (id == null || id.isBlank()) {
            throw new ConfigurationException("down needs the sandbox id that airlock up printed");
        }
        DaytonaSettings s = DaytonaSettings.from(settings, System.getenv());
        try (DaytonaApi api = new DaytonaApi(s, settings)) {
            JsonNode r;
            try {
                r = api.get(id);
            } catch (EnvironmentClosedException e) {
                throw new ConfigurationException("no Daytona sandbox '" + id + "' at " + s.apiUrl());
            }
            if (ResourceLabels.parse(labels(r), DaytonaBackend.LABEL_PREFIX).isEmpty()) {
                throw new DeniedException("Daytona sandbox '" + id + "' was not created by Airlock (no "
                        + DaytonaBackend.LABEL_PREFIX + ResourceLabels.MANAGED + " label); delete it in Daytona if you mean to");
            }
            DaytonaBackend.remove(api, id);
        }
    }

    @Override
    public List<String> gc(Settings settings, Duration olderThan, boolean includeKept) {
        if (olderThan.isNegative()) {
            throw new ConfigurationException("--older-than must not be negative");
        }
        DaytonaSettings s = DaytonaSettings.from(settings, System.getenv());
        String owner = ResourceLabels.currentOwner();
        Instant now = Instant.now();
        List<String> removed = new ArrayList<>();
        try (DaytonaApi api = new DaytonaApi(s, settings)) {
            // The service filters on Airlock's and this owner's labels; the rest is judged here.
            for (JsonNode r : api.list(ResourceLabels.selector(DaytonaBackend.LABEL_PREFIX))) {
                var labels = ResourceLabels.parse(labels(r), DaytonaBackend.LABEL_PREFIX);
                if (labels.isPresent() && labels.get().collectable(owner, now, olderThan, includeKept)) {
                    String id = r.path("id").asText();
                    DaytonaBackend.remove(api, id);
                    removed.add(id);
                }
            }
            for (JsonNode snap : DaytonaSnapshot.collectable(api, olderThan)) {
                api.deleteSnapshot(snap.path("name").asText());
                removed.add(snap.path("name").asText());
            }
        }
        return removed;
    }

    private static Map<String, String> labels(JsonNode record) {
        Map<String, String> m = new java.util.LinkedHashMap<>();
        record.path("labels").properties().forEach(e -> m.put(e.getKey(), e.getValue().asText()));
        return m;
    }
}
