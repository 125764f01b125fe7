package dev.airlock.modal;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.settings.SettingKey;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.SandboxLifecycle;
import dev.airlock.spi.SnapshotLedger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The {@code modal} backend: Modal sandboxes over Modal's gRPC protocol; {@code up}/{@code down} keep one across invocations. */
public final class ModalProvider implements EnvironmentProvider, SandboxLifecycle {
    /** Where {@code $AIRLOCK_HOME} is read (the snapshot ledger's place): the process's, or a test's. */
    private final Map<String, String> env;

    public ModalProvider() {
        this(System.getenv());
    }

    /** With {@code env} standing for the process's environment when finding the snapshot ledger (tests: a temp AIRLOCK_HOME). */
    ModalProvider(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    /** This user's ledger of the snapshots Airlock took on Modal ({@link ModalSnapshotGc}). */
    SnapshotLedger ledger() {
        return SnapshotLedger.of(name(), env);
    }

    @Override
    public String name() {
        return "modal";
    }

    /** The table in docs/backends.md (and docs/settings.md, generated from these), as the core checks it. */
    @Override
    public List<SettingKey> settingKeys() {
        return List.of(
                SettingKey.of(ModalSettings.SERVER_URL, "https://HOST:PORT or http:// (plaintext)",
                        "MODAL_SERVER_URL, else " + ModalSettings.DEFAULT_SERVER_URL, "Modal's control plane"),
                SettingKey.secret(ModalSettings.TOKEN_ID, "string", "the token id (MODAL_TOKEN_ID)"),
                SettingKey.secret(ModalSettings.TOKEN_SECRET, "string", "the token secret (MODAL_TOKEN_SECRET)"),
                SettingKey.of(ModalSettings.ENVIRONMENT, "string", "MODAL_ENVIRONMENT, else the account's default", "Modal environment"),
                SettingKey.of(ModalSettings.APP, "string", "airlock", "the app sandboxes belong to"),
                SettingKey.of(ModalSettings.IMAGE, "registry tag", "debian:bookworm-slim", "image of the sandbox"),
                SettingKey.of(ModalSettings.CPU, "cores (decimal)", "0.125", "CPU request"),
                SettingKey.of(ModalSettings.MEMORY, "MiB", "128", "memory request"),
                SettingKey.of(ModalSettings.TIMEOUT, "duration, up to 24h", "10m", "the sandbox's lifetime"),
                SettingKey.of(ModalSettings.WORKDIR, "path", "the image's", "working directory of commands"),
                SettingKey.of(ModalSettings.ENV + SettingKey.NAME, "string", "", "sandbox variables (values never in argv)"),
                SettingKey.of(ModalSettings.CA_FILE, "PEM file", "system roots", "extra trust for TLS"),
                SettingKey.of(ModalSettings.SANDBOX_ID, "sandbox id", "", "attach; never terminated on close"),
                SettingKey.of(ModalSettings.SNAPSHOT, "image id", "",
                        "create the sandbox from a filesystem snapshot (Environment.snapshot(), airlock snapshot) instead of the image"),
                SettingKey.of(ModalSettings.FAMILY, "v2 | v1", "v2", "the sandbox RPC family"),
                SettingKey.of(ModalSettings.API_TIMEOUT, "duration", "60s", "bound on one control call"),
                SettingKey.of(ModalSettings.IMAGE_BUILDER_VERSION, "string", "MODAL_IMAGE_BUILDER_VERSION, else the environment's",
                        "how the service builds the image (2024.10, 2025.06...)"));
    }

    /** Modal's credentials in the environment; stripped from every child (MODAL_TOKEN_ID looks harmless by name). */
    @Override
    public Set<String> secretVariables() {
        return Set.of("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET");
    }

    static ModalClient client(Settings settings) {
        ModalSettings s = ModalSettings.from(settings, System.getenv());
        return new ModalClient(s, RetryPolicy.from(settings, ModalSettings.PREFIX));
    }

    @Override
    public Availability check(Settings settings) {
        try (ModalClient c = client(settings)) {
            c.authenticate();
            return Availability.ok("Modal at " + c.settings.serverUrl() + ", image " + c.settings.image());
        } catch (AirlockException e) {
            return Availability.unavailable(e.getMessage());
        }
    }

    @Override
    public Environment open(OpenContext context) {
        return ModalBackend.open(context, client(context.settings()), ledger());
    }

    @Override
    public String attachKey() {
        return ModalSettings.SANDBOX_ID;
    }

    /** {@code airlock up}: a sandbox that outlives this process (until {@code down} or its timeout); prints its id. */
    @Override
    public String up(Settings settings, Duration ttl) {
        if (ttl.toSeconds() < 1 || ttl.toSeconds() > 86_400) {
            throw new ConfigurationException("--ttl " + ttl.toSeconds() + "s is beyond Modal's sandbox lifetime: 1s to 24h");
        }
        try (ModalClient c = client(settings.with(ModalSettings.TIMEOUT, ttl.toSeconds() + "s"))) {
            return ModalSandbox.create(c, true).id();
        }
    }

    @Override
    public void down(Settings settings, String id) {
        if (id == null || id.isBlank()) {
            throw new ConfigurationException("down needs the sandbox id that airlock up printed");
        }
        try (ModalClient c = client(settings)) {
            c.authenticate();
            ModalSandbox.terminate(c, id.trim(), ModalSandbox.isV2(id.trim()));
        }
    }

    /**
     * Terminates the running sandboxes this owner tagged (see {@link ModalGc}), then deletes the
     * snapshots in this user's ledger that nothing needs any more (see {@link ModalSnapshotGc}).
     */
    @Override
    public List<String> gc(Settings settings, Duration olderThan, boolean includeKept) {
        try (ModalClient c = client(settings)) {
            List<String> removed = new ArrayList<>(ModalGc.collect(c, olderThan, includeKept));
            removed.addAll(ModalSnapshotGc.collect(c, ledger(), olderThan, Set.copyOf(removed)));
            return removed;
        }
    }
}
