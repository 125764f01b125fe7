package dev.airlock.vercel;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.settings.SettingKey;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.ResourceLabels;
import dev.airlock.spi.SandboxLifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** The {@code vercel} backend: Vercel Sandbox over its REST API; {@code up}, {@code down}, {@code gc} too. */
public final class VercelProvider implements EnvironmentProvider, SandboxLifecycle {
    @Override
    public String name() {
        return "vercel";
    }

    @Override
    public List<SettingKey> settingKeys() {
        return List.of(
                SettingKey.of(VercelSettings.API_URL, "URL", "https://vercel.com/api", "Vercel's REST API"),
                SettingKey.secret(VercelSettings.TOKEN, "string", "the API token (VERCEL_TOKEN is honoured)"),
                SettingKey.of(VercelSettings.TEAM_ID, "team_...", "VERCEL_TEAM_ID", "sent as ?teamId="),
                SettingKey.of(VercelSettings.PROJECT_ID, "prj_...", "VERCEL_PROJECT_ID; required", "the project sandboxes belong to"),
                SettingKey.of(VercelSettings.IMAGE, "image name", "the service's", "image (v3 create)"),
                SettingKey.of(VercelSettings.RUNTIME, "runtime", "", "runtime (v2 create; not with image)"),
                SettingKey.of(VercelSettings.VCPUS, "int", "2", "vCPUs"),
                SettingKey.of(VercelSettings.TIMEOUT, "duration", "5m", "the sandbox's lifetime, extended while in use"),
                SettingKey.of(VercelSettings.ENV + "NAME", "string", "", "variables of the sandbox"),
                SettingKey.of(VercelSettings.PORTS, "list of ports", "", "ports to expose, with airlock.ports (at most 15)"),
                SettingKey.of(VercelSettings.SNAPSHOT, "snapshot id", "", "create the sandbox from this snapshot"),
                SettingKey.of(VercelSettings.PERSISTENT, "boolean", "false", "keep a snapshot when stopped"),
                SettingKey.of(VercelSettings.SANDBOX_ID, "sandbox name", "", "attach; never stopped on close"));
    }

    /** Vercel's credentials in the environment; stripped from every child. */
    @Override
    public Set<String> secretVariables() {
        return Set.of(VercelSettings.TOKEN_VARIABLE, "VERCEL_OIDC_TOKEN");
    }

    @Override
    public Availability check(Settings settings) {
        try {
            VercelSettings s = VercelSettings.from(settings, System.getenv());
            s.requireToken();
            return Availability.ok("Vercel Sandbox at " + s.apiUrl() + ", project " + s.requireProject()
                    + s.sandboxId().map(id -> ", attaching to " + id).orElse(""));
        } catch (AirlockException e) {
            return Availability.unavailable(e.getMessage());
        }
    }

    @Override
    public Environment open(OpenContext context) {
        return VercelBackend.open(context, VercelSettings.from(context.settings(), System.getenv()));
    }

    @Override
    public String attachKey() {
        return VercelSettings.SANDBOX_ID;
    }

    @Override
    public String up(Settings settings, Duration ttl) {
        if (ttl.toSeconds() < 10) {
            throw new ConfigurationException("--ttl " + ttl.toSeconds() + "s is shorter than a Vercel sandbox's shortest lifetime, 10s");
        }
        VercelSettings s = VercelSettings.from(settings.with(VercelSettings.TIMEOUT, ttl.toSeconds() + "s"), System.getenv());
        try (VercelApi api = new VercelApi(s, settings)) {
            VercelApi.SessionInfo info = api.create(VercelBackend.tags(true));
            try {
                VercelBackend.awaitRunning(api, info.sessionId());
            } catch (AirlockException e) {
                VercelBackend.removeQuietly(api, info);
                throw e;
            }
            return info.sandboxName();
        }
    }

    @Override
    public void down(Settings settings, String id) {
        VercelSettings s = VercelSettings.from(settings, System.getenv());
        try (VercelApi api = new VercelApi(s, settings)) {
            VercelApi.SessionInfo info = api.sandbox(id).orElseThrow(() -> new dev.airlock.NoSuchPathException(
                    "Vercel sandbox " + id));
            if (!"1".equals(info.tags().get(VercelBackend.TAG))) {
                throw new ConfigurationException("the Vercel sandbox " + id + " was not made by Airlock; remove it with Vercel's own tools");
            }
            api.stop(info.sessionId());
            api.delete(info.sandboxName());
        }
    }

    /** Stops and deletes the sandboxes this owner tagged that are older than asked ({@code up} ones only when asked). */
    @Override
    public List<String> gc(Settings settings, Duration olderThan, boolean includeKept) {
        VercelSettings s = VercelSettings.from(settings, System.getenv());
        List<String> removed = new ArrayList<>();
        String owner = ResourceLabels.currentOwner();
        java.time.Instant now = java.time.Instant.now();
        try (VercelApi api = new VercelApi(s, settings)) {
            for (VercelApi.SessionInfo info : api.list(VercelBackend.TAG, "1")) {
                boolean collect = ResourceLabels.parse(info.tags(), VercelBackend.LABEL_PREFIX)
                        .filter(l -> l.collectable(owner, now, olderThan, includeKept)).isPresent();
                if (collect) {
                    api.stop(info.sessionId());
                    api.delete(info.sandboxName());
                    removed.add(info.sandboxName());
                }
            }
        }
        return removed;
    }
}
