package dev.airlock.vercel;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.SandboxLifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The {@code vercel} backend: Vercel Sandbox over its REST API; {@code up}, {@code down}, {@code gc} too. */
public final class VercelProvider implements EnvironmentProvider, SandboxLifecycle {
    @Override
    public String name() {
        return "vercel";
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
        return VercelEnvironment.open(context, VercelSettings.from(context.settings(), System.getenv()));
    }

    @Override
    public String attachKey() {
        return VercelSettings.SANDBOX_ID;
    }

    @Override
    public String up(Settings settings) {
        VercelSettings s = VercelSettings.from(settings, System.getenv());
        try (VercelApi api = new VercelApi(s, settings)) {
            VercelApi.SessionInfo info = api.create(VercelEnvironment.tags(true));
            try {
                VercelEnvironment.awaitRunning(api, info.sessionId());
            } catch (AirlockException e) {
                VercelEnvironment.removeQuietly(api, info);
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
            if (!"1".equals(info.tags().get(VercelEnvironment.TAG))) {
                throw new ConfigurationException("the Vercel sandbox " + id + " was not made by Airlock; remove it with Vercel's own tools");
            }
            api.stop(info.sessionId());
            api.delete(info.sandboxName());
        }
    }

    @Override
    public List<String> gc(Settings settings, Duration olderThan, boolean includeKept) {
        VercelSettings s = VercelSettings.from(settings, System.getenv());
        List<String> removed = new ArrayList<>();
        long cutoff = System.currentTimeMillis() - olderThan.toMillis();
        try (VercelApi api = new VercelApi(s, settings)) {
            for (VercelApi.SessionInfo info : api.list(VercelEnvironment.TAG, "1")) {
                boolean kept = "true".equals(info.tags().get(VercelEnvironment.TAG_KEPT));
                long created = parse(info.tags().get(VercelEnvironment.TAG_CREATED), info.createdAt());
                if (created <= cutoff && (includeKept || !kept)) {
                    api.stop(info.sessionId());
                    api.delete(info.sandboxName());
                    removed.add(info.sandboxName());
                }
            }
        }
        return removed;
    }

    private static long parse(String v, long fallback) {
        try {
            return v == null ? fallback : Long.parseLong(v);
        } catch (NumberFormatException e) {
            return fallback;
        }
    }
}
