package dev.airlock.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.Capabilities;
import dev.airlock.Environment;
import dev.airlock.NetworkMode;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import dev.airlock.remote.WireFailure;
import dev.airlock.shell.Shell;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.Backend;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.GroupState;
import dev.airlock.spi.Killer;
import dev.airlock.spi.Launch;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.spi.ResourceLabels;
import dev.airlock.spi.Stager;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A Daytona sandbox as an Airlock backend. The glue to the core's hooks lives here and only
 * here: {@link #launch} (a session per command, always {@code sh -c '<script>'}, output to files),
 * {@link #stage} (0700 folder, upload, chmod 0600), {@link #remove}, {@link #kill} (delete
 * the command's session), {@link #stopSandbox} (stop and delete, once), {@link #portForwarder}
 * (signed preview URLs, {@link DaytonaPreviews}) and {@link #snapshot} ({@link DaytonaSnapshot}).
 */
public final class DaytonaBackend implements Backend, Stager, Killer {
    /** Daytona labels take the cloud spelling of {@link ResourceLabels}: {@code airlock.managed}, {@code airlock.owner}... */
    static final String LABEL_PREFIX = "airlock.";
    /** The core's setting for where the private dir goes: honoured here, but a snapshot then cannot clear it. */
    private static final String PRIVATE_DIR_BASE = "airlock.private-dir.base";

    private final DaytonaApi api;
    private final DaytonaApi.Toolbox toolbox;
    private final String sandboxId;
    private final boolean attached;
    /** A 0700 dir of this environment for command output files, made before the probe (which needs it). */
    private final String ioDir;
    /** Handles start far above any pid, so no handle is ever mistaken for the record's pid. */
    private final AtomicLong handles = new AtomicLong(1L << 40);
    private final Map<Long, DaytonaProcess> running = new ConcurrentHashMap<>();
    private final DaytonaPreviews previews;
    /** Whether the private dir goes under {@link DaytonaSnapshot#PRIVATE_BASE}: unless the user chose a base. */
    private final boolean ownPrivateBase;

    private DaytonaBackend(DaytonaApi api, String sandboxId, String proxyUrl, boolean attached, java.time.Duration previewExpiry,
                           boolean ownPrivateBase) {
        this.ownPrivateBase = ownPrivateBase;
        this.api = api;
        this.sandboxId = sandboxId;
        this.attached = attached;
        this.toolbox = api.toolbox(sandboxId, proxyUrl);
        this.ioDir = DaytonaSnapshot.PRIVATE_BASE + "/io-" + StdinScripts.randomToken();
        this.previews = new DaytonaPreviews(api, sandboxId, previewExpiry, !attached);
    }

    static Environment open(OpenContext context, DaytonaSettings s) {
        DaytonaApi api = new DaytonaApi(s, context.settings());
        String id = null;
        boolean attached = s.sandboxId().isPresent();
        DaytonaBackend backend;
        try {
            JsonNode record;
            if (attached) {
                id = s.sandboxId().get();
                record = api.get(id);
            } else {
                record = api.create(createBody(api, s, false));
                id = record.path("id").asText();
            }
            record = awaitStarted(api, id, record, s.startTimeout());
            String proxy = record.path("toolboxProxyUrl").asText("");
            if (proxy.isEmpty()) {
                proxy = api.toolboxProxyUrl(id);
            }
            backend = new DaytonaBackend(api, id, proxy, attached, s.previewExpiry(),
                    context.settings().get(PRIVATE_DIR_BASE).filter(v -> !v.isBlank()).isEmpty());
            if (!attached && s.snapshot().isPresent()) {
                // A snapshot holds the whole filesystem: the private dirs and output files of the
                // sandbox it was taken of go before anything runs here.
                backend.toolbox.deleteTree(DaytonaSnapshot.PRIVATE_BASE);
            }
            backend.toolbox.mkdir(backend.ioDir, 0700);
        } catch (RuntimeException e) {
            if (!attached && id != null && !id.isEmpty()) {
                removeQuietly(api, id);
            }
            api.close();
            throw e;
        }
        return context.open(backend);
    }

    /** The backend of {@code env}, a daytona environment (for tests). */
    static DaytonaBackend of(Environment env) {
        return OpenContext.backendOf(env, DaytonaBackend.class)
                .orElseThrow(() -> new IllegalArgumentException(env.name() + " is not a daytona environment"));
    }

    @Override
    public String name() {
        return "daytona";
    }

    @Override
    public String id() {
        return sandboxId;
    }

    /** The create request: labelled so {@code gc} finds it; ephemeral (deleted when stopped) unless kept. */
    static ObjectNode createBody(DaytonaApi api, DaytonaSettings s, boolean keep) {
        ObjectNode b = api.json().createObjectNode();
        if (s.image().isPresent()) {
            ObjectNode build = b.putObject("buildInfo");
            build.put("dockerfileContent", "FROM " + s.image().get());
            s.cpu().ifPresent(v -> b.put("cpu", v));
            s.memory().ifPresent(v -> b.put("memory", v));
            s.disk().ifPresent(v -> b.put("disk", v));
        } else {
            s.snapshot().ifPresent(v -> b.put("snapshot", v));
        }
        s.target().ifPresent(v -> b.put("target", v));
        ObjectNode env = b.putObject("env");
        s.env().forEach(env::put);
        Map<String, String> labels = new LinkedHashMap<>(s.labels());
        labels.putAll(ResourceLabels.now(keep).asMap(LABEL_PREFIX)); // the user's labels cannot pose as ours
        ObjectNode l = b.putObject("labels");
        labels.forEach(l::put);
        if (s.network() == NetworkMode.OFF) {
            b.put("networkBlockAll", true); // airlock.network=off, as the SDK's networkBlockAll sends it
        } else if (s.network() == NetworkMode.ALLOWLIST) {
            // As the SDK sends networkAllowList and domainAllowList: comma-separated, each only when set.
            String ranges = s.allowed().stream().filter(e -> e.cidr()).map(e -> e.destination()).collect(Collectors.joining(","));
            String domains = s.allowed().stream().filter(e -> !e.cidr()).map(e -> e.destination()).collect(Collectors.joining(","));
            if (!ranges.isEmpty()) {
                b.put("networkAllowList", ranges);
            }
            if (!domains.isEmpty()) {
                b.put("domainAllowList", domains);
            }
        }
        b.put("autoStopInterval", s.autoStopMinutes());
        b.put("autoDeleteInterval", keep ? -1 : s.autoDeleteMinutes());
        return b;
    }

    /** Polls until {@code started}, every 100 ms at first, then x1.5 up to 2 s; {@code error}/{@code build_failed} say why. */
    static JsonNode awaitStarted(DaytonaApi api, String id, JsonNode record, Duration timeout) {
        long until = System.nanoTime() + timeout.toNanos();
        long pause = 100;
        JsonNode r = record;
        while (true) {
            String state = r.path("state").asText("");
            if (state.equals("started")) {
                return r;
            }
            if (state.equals("error") || state.equals("build_failed")) {
                throw new BackendException("the Daytona sandbox " + id + " ended in " + state + ": "
                        + r.path("errorReason").asText("no reason given"));
            }
            if (System.nanoTime() > until) {
                throw new BackendException("the Daytona sandbox " + id + " is still " + state + " after "
                        + timeout.toSeconds() + " s; raise " + DaytonaSettings.START_TIMEOUT + " or check the Daytona dashboard");
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BackendException("interrupted while waiting for the Daytona sandbox " + id + " to start", e);
            }
            pause = Math.min(2000, pause * 3 / 2);
            r = api.get(id);
        }
    }

    public String sandboxId() {
        return sandboxId;
    }

    @Override
    public Capabilities capabilities() {
        // native kill: the exec's session is deleted (processGroup() names the session, see groupState)
        return Capabilities.pipe().withStdinMode(StdinMode.PAYLOAD).withAttachable(true).withDisposable(!attached)
                .withNetworkModes(DaytonaSettings.NETWORK_MODES).withArgvLimit(64 * 1024)
                .withPorts(dev.airlock.PortSupport.ANY).withSnapshots(true);
    }

    /** Each port is a signed preview URL ({@link DaytonaPreviews}). */
    @Override
    public Optional<dev.airlock.spi.PortForwarder> portForwarder() {
        return Optional.of(previews);
    }

    /** Daytona's snapshot of the sandbox's filesystem ({@link DaytonaSnapshot}); the id is its name. */
    @Override
    public String snapshot(String privateDir, Deadline deadline) throws IOException {
        return DaytonaSnapshot.take(api, sandboxId, privateDir, deadline);
    }

    /**
     * Under {@link DaytonaSnapshot#PRIVATE_BASE}, which a sandbox opened from a snapshot clears;
     * the core's own choice where the user set {@code airlock.private-dir.base}.
     */
    @Override
    public Optional<String> privateDirBase() {
        return ownPrivateBase ? Optional.of(DaytonaSnapshot.PRIVATE_BASE) : Optional.empty();
    }

    @Override
    public RemoteProcess launch(Launch launch, Deadline deadline) throws IOException {
        String token = StdinScripts.randomToken();
        String session = "airlock-" + token;
        String out = ioDir + "/" + token + ".out";
        String err = ioDir + "/" + token + ".err";
        // Always `sh -c '<script>'`: the daemon may pipe the command text into a shell's stdin, and a
        // script read from there would go on reading whatever the command leaves unread.
        String inner = "exec " + launch.shell() + " -c " + Shell.quote(launch.script()) + " </dev/null >"
                + Shell.quotePath(out) + " 2>" + Shell.quotePath(err);
        String command = "sh -c " + Shell.quote(inner);
        try {
            toolbox.createSession(session);
        } catch (AirlockException e) {
            throw new IOException(e.getMessage(), e);
        }
        String cmd;
        try {
            cmd = toolbox.execAsync(session, command);
        } catch (dev.airlock.DispatchOutcomeUnknownException e) {
            throw e;
        } catch (AirlockException e) {
            toolbox.deleteSession(session);
            throw new IOException(e.getMessage(), e);
        }
        long handle = handles.incrementAndGet();
        DaytonaProcess p = new DaytonaProcess(toolbox, handle, session, cmd, out, err, () -> running.remove(handle),
                this::endedNow);
        running.put(handle, p);
        return p;
    }

    /** The states of a sandbox that runs no more commands until someone starts (or re-creates) it. */
    private static final java.util.Set<String> ENDED_STATES =
            java.util.Set.of("stopping", "stopped", "destroying", "destroyed", "archiving", "archived", "error", "build_failed");

    /**
     * One line saying the sandbox ended, when the service says so (asked after a command's end was
     * lost: the sandbox may have been stopped or deleted under it); empty while it is started, and
     * when the service cannot be asked (the lost connection then stands).
     */
    private Optional<AirlockException> endedNow() {
        String state;
        try {
            state = api.get(sandboxId).path("state").asText("");
        } catch (dev.airlock.EnvironmentClosedException gone) {
            state = "deleted";
        } catch (AirlockException e) {
            if (!(e.getCause() instanceof WireFailure w && w.httpStatus() == 404)) {
                return Optional.empty();
            }
            state = "deleted";
        }
        if (!state.equals("deleted") && !ENDED_STATES.contains(state)) {
            return Optional.empty();
        }
        return Optional.of(new dev.airlock.BackendUnavailableException("the Daytona sandbox " + sandboxId + " has ended (it is "
                + state + ", which ended its commands)" + (attached
                ? "; make a new one with 'airlock --backend daytona up --ttl DURATION' and attach to that"
                : "; open a new environment")));
    }

    /**
     * A command's "group" is its session ({@link DaytonaProcess#processGroup()} is a local handle):
     * it has members until the session is deleted, by our kill or after the command's output was
     * read. Read locally, so the core's SIGTERM/SIGKILL rounds cost no extra command on the target.
     */
    @Override
    public Optional<Killer> killer() {
        return Optional.of(this);
    }

    @Override
    public Optional<Stager> stager() {
        return Optional.of(this);
    }

    @Override
    public GroupState groupState(long handle, Deadline deadline) {
        DaytonaProcess p = running.get(handle);
        return p != null && p.sessionAlive() ? GroupState.alive(OptionalLong.empty()) : GroupState.gone();
    }

    @Override
    public void stage(String path, Payload data, Deadline deadline) throws IOException {
        try {
            int slash = path.lastIndexOf('/');
            if (slash > 0) {
                toolbox.mkdir(path.substring(0, slash), 0700);
            }
            toolbox.upload(path, data);
            toolbox.chmod(path, 0600);
        } catch (AirlockException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    @Override
    public void remove(String path, Deadline deadline) throws IOException {
        try {
            toolbox.deleteFile(path);
        } catch (AirlockException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /** One second a kill step: a group read or a signal here is a toolbox command over HTTP, across the internet. */
    @Override
    public java.time.Duration killStepCost() {
        return java.time.Duration.ofSeconds(1);
    }

    @Override
    public void kill(RemoteProcess process, OptionalLong group, boolean force, Deadline deadline) throws IOException {
        try {
            ((DaytonaProcess) process).kill();
        } catch (AirlockException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    @Override
    public void stopSandbox(Deadline deadline) {
        try {
            try {
                toolbox.deleteTree(ioDir); // matters for an attached sandbox, which stays
            } catch (RuntimeException ignored) {
                // the sandbox is going anyway, or the dir was never made
            }
            if (!attached) {
                remove(api, sandboxId);
            }
        } finally {
            api.close();
        }
    }

    /** Stops then deletes; 404 is success, 409 (a state change pending) waits and tries again, bounded. */
    static void remove(DaytonaApi api, String id) {
        retryOnConflict(() -> {
            try {
                api.stop(id);
            } catch (dev.airlock.EnvironmentClosedException gone) {
                // already deleted
            } catch (AirlockException e) {
                if (!(e.getCause() instanceof WireFailure w && w.httpStatus() == 400)) { // 400: not running, nothing to stop
                    throw e;
                }
            }
        });
        retryOnConflict(() -> {
            try {
                api.delete(id);
            } catch (dev.airlock.EnvironmentClosedException gone) {
                // 404: already gone, which is what delete wants
            }
        });
    }

    private static void retryOnConflict(Runnable r) {
        long pause = 200;
        for (int i = 0; ; i++) {
            try {
                r.run();
                return;
            } catch (AirlockException e) {
                if (i >= 20 || !(e.getCause() instanceof WireFailure w && w.httpStatus() == 409)) {
                    throw e;
                }
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BackendException("interrupted while waiting for a Daytona state change");
            }
            pause = Math.min(3000, pause * 2);
        }
    }

    private static void removeQuietly(DaytonaApi api, String id) {
        try {
            remove(api, id);
        } catch (RuntimeException ignored) {
            // gc finds it by its labels
        }
    }
}
