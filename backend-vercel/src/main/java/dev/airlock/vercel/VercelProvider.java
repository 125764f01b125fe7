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
import dev.airlock.spi.SnapshotLedger;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/** The {@code vercel} backend: Vercel Sandbox over its REST API; {@code up}, {@code down}, {@code gc} too. */
public final class VercelProvider implements EnvironmentProvider, SandboxLifecycle {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(VercelProvider.class);
    /** The ledger of the snapshots taken here: Vercel's snapshots carry no tags, so it is how gc knows its own. */
    private final Supplier<SnapshotLedger> ledger;

    public VercelProvider() {
        this(() -> SnapshotLedger.of("vercel"));
    }

    /** With {@code ledger} instead of {@code $AIRLOCK_HOME/snapshots/vercel.ledger} (tests). */
    VercelProvider(SnapshotLedger ledger) {
        this(() -> ledger);
    }

    private VercelProvider(Supplier<SnapshotLedger> ledger) {
        this.ledger = ledger;
    }

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
        return VercelBackend.open(context, VercelSettings.from(context.settings(), System.getenv()), ledger.get());
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

    /**
     * Stops and deletes the sandboxes this owner tagged that are older than asked ({@code up} ones
     * only when asked), with the snapshots the service would leave orphaned unless the ledger names
     * the sandbox (those were handed to a caller), then the ledger's snapshots that nothing needs
     * ({@link #collectSnapshots}).
     */
    @Override
    public List<String> gc(Settings settings, Duration olderThan, boolean includeKept) {
        VercelSettings s = VercelSettings.from(settings, System.getenv());
        List<String> removed = new ArrayList<>();
        String owner = ResourceLabels.currentOwner();
        Instant now = Instant.now();
        SnapshotLedger snapshots = ledger.get();
        // A sandbox the ledger names took snapshots the caller was given: its delete leaves them to the ledger's rule.
        Set<String> snapshotted = new HashSet<>();
        snapshots.entries().forEach(e -> snapshotted.add(e.source()));
        try (VercelApi api = new VercelApi(s, settings)) {
            for (VercelApi.SessionInfo info : api.list(VercelBackend.TAG, "1")) {
                boolean collect = ResourceLabels.parse(info.tags(), VercelBackend.LABEL_PREFIX)
                        .filter(l -> l.collectable(owner, now, olderThan, includeKept)).isPresent();
                if (collect) {
                    api.stop(info.sessionId());
                    api.delete(info.sandboxName(), !snapshotted.contains(ledgerSource(s, info.sandboxName())));
                    removed.add(info.sandboxName());
                }
            }
            Set<String> removedNow = new HashSet<>();
            removed.forEach(name -> removedNow.add(ledgerSource(s, name)));
            removed.addAll(collectSnapshots(api, s, snapshots, now.minus(olderThan), removedNow));
        }
        return removed;
    }

    /**
     * A sandbox as the ledger names it: {@code TEAM/PROJECT/NAME} ({@code -} for no team), since one
     * ledger serves every team and project this user works in, and a gc judges only its own
     * project's (a sandbox of another is not in its listing, which would read as gone).
     */
    static String ledgerSource(VercelSettings s, String sandboxName) {
        return scope(s) + sandboxName;
    }

    private static String scope(VercelSettings s) {
        return s.teamId().orElse("-") + "/" + s.requireProject() + "/";
    }

    /**
     * Deletes the ledger's snapshots taken at or before {@code cutoff} (the ledger keeps seconds)
     * whose source sandbox is gone (the environment that took it has closed) and from which no
     * existing sandbox was made (none has it as its current snapshot or its session's source), and
     * forgets them; one the service no longer has (404, 410, {@code deleted}) is forgotten too. One
     * whose source was deleted in this run ({@code removedNow}) is left for the next run, as
     * Daytona's gc does. Entries of another team or project are left as they are. Returns the ids
     * deleted or found gone.
     */
    static List<String> collectSnapshots(VercelApi api, VercelSettings s, SnapshotLedger ledger, Instant cutoff,
                                         Set<String> removedNow) {
        String scope = scope(s);
        List<SnapshotLedger.Entry> old = ledger.entries().stream()
                .filter(e -> e.source().startsWith(scope) && !e.taken().isAfter(cutoff)).toList();
        if (old.isEmpty()) {
            return List.of();
        }
        Set<String> sandboxes = new HashSet<>();
        Set<String> used = new HashSet<>();
        for (var sb : api.sandboxes()) {
            sandboxes.add(ledgerSource(s, sb.path("name").asText()));
            String current = sb.path("currentSnapshotId").asText("");
            if (!current.isEmpty()) {
                used.add(current);
            }
            // The listing carries no sourceSnapshotId (the SDK's Sandbox has none): the session says it.
            String source = sb.path("sourceSnapshotId").asText("");
            if (!source.isEmpty()) {
                used.add(source);
            }
            String session = sb.path("currentSessionId").asText("");
            if (!session.isEmpty()) {
                api.sourceSnapshot(session).ifPresent(used::add);
            }
        }
        List<String> gone = new ArrayList<>();
        try {
            for (SnapshotLedger.Entry e : old) {
                if (sandboxes.contains(e.source()) || removedNow.contains(e.source()) || used.contains(e.id())) {
                    continue;
                }
                try {
                    if (api.snapshotStatus(e.id()).filter(status -> !status.equals("deleted")).isPresent()) {
                        api.deleteSnapshot(e.id());
                    }
                    gone.add(e.id());
                } catch (AirlockException failed) {
                    // This one stays in the ledger for the next run; the others are not held up by it.
                    LOG.warn("gc left the Vercel snapshot {}: {}", e.id(), failed.getMessage());
                }
            }
        } finally {
            ledger.forget(gone); // what was deleted is forgotten even when a later call fails
        }
        return gone;
    }
}
