package dev.airlock.modal.emulator;

import dev.airlock.emulator.EmulatedSandbox;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.modal.proto.GenericResult;
import dev.airlock.modal.proto.Sandbox;
import io.grpc.Status;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** The emulator's world: apps, images, sandboxes (each with one task) and their execs. */
final class ModalState {
    private static final String ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final SecureRandom RANDOM = new SecureRandom();

    /** One sandbox: its task, its execs, and how it ended. */
    static final class Box {
        final String id;
        final String taskId;
        final boolean v2;
        final EmulatedSandbox sandbox;
        final Map<String, String> env;
        final String workdir;
        final Map<String, ExecState> execs = new ConcurrentHashMap<>();
        final CompletableFuture<GenericResult> result = new CompletableFuture<>();
        final String appId;
        /** The name the create gave it, or null; unique among an app's running sandboxes. */
        final String name;
        /** Replaced whole by a tags-set, as the service replaces the set. */
        volatile Map<String, String> tags;
        /** Seconds since the epoch, as the service reports {@code created_at}. */
        final double createdAt;
        /** The tunnel of each declared port (its edge on loopback) and whether it was declared unencrypted; closed with the sandbox. */
        final Map<Integer, Tunnel> tunnels = new java.util.TreeMap<>();
        /** Whether the create blocked the network ({@code block_network} or a BLOCKED network_access). */
        volatile boolean networkBlocked;
        /** The network access the create asked for, as sent (its allowlists included). */
        volatile dev.airlock.modal.proto.NetworkAccess networkAccess;

        Box(String id, String taskId, boolean v2, EmulatedSandbox sandbox, Map<String, String> env, String workdir,
            String appId, String name, Map<String, String> tags, double createdAt) {
            this.appId = appId;
            this.name = name;
            this.tags = Map.copyOf(tags);
            this.createdAt = createdAt;
            this.id = id;
            this.taskId = taskId;
            this.v2 = v2;
            this.sandbox = sandbox;
            this.env = Map.copyOf(env);
            this.workdir = workdir;
        }
    }

    /** A declared port's edge: a relay into the sandbox's loopback, on 127.0.0.1. */
    record Tunnel(dev.airlock.emulator.PortEdge edge, boolean unencrypted) {
    }

    /**
     * How images build here: {@code entries} log entries before the result (0: every image is
     * built already), the first join cut after {@code cutAfter} of them (0: never); the
     * {@code last_entry_id} of each join, in order, for tests.
     */
    record ImageBuild(int entries, int cutAfter, java.util.List<String> joinsFrom) {
    }

    /** The image builder versions the service knows; an image asked with another is refused. */
    static final java.util.List<String> BUILDER_VERSIONS = java.util.List.of("2023.12", "2024.04", "2024.10", "2025.06", "PREVIEW");

    final EmulatorContext context;
    final ImageBuild imageBuild;
    /** The environments' image builder version ({@code EnvironmentGetOrCreate} answers it). */
    final String imageBuilderVersion;
    /** The builder version of every ImageGetOrCreate so far, in order, for tests. */
    final java.util.List<String> builderVersionsAsked = new java.util.concurrent.CopyOnWriteArrayList<>();
    final Jwt jwt;
    private final Duration jwtTtl;
    private final int defaultTimeout;
    private final Map<String, Box> byId = new ConcurrentHashMap<>();
    private final Map<String, Box> byTask = new ConcurrentHashMap<>();
    final Map<String, String> apps = new ConcurrentHashMap<>();
    /** Image ids asked for, to the registry tag each was asked from. */
    final Map<String, String> images = new ConcurrentHashMap<>();
    /** The images filesystem snapshots made. */
    final SnapshotImages snapshots;
    /** The workspace's sandbox creation rate ({@link SandboxCreationRate}), counted by both create RPCs. */
    final SandboxCreationRate creationRate;
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "modal-emulator-timeouts");
        t.setDaemon(true);
        return t;
    });
    private volatile String routerUrl;

    ModalState(EmulatorContext context, Jwt jwt, Duration jwtTtl, int defaultTimeout) {
        this.context = context;
        this.imageBuild = new ImageBuild(context.settings().getInt("airlock.modal.emulator.image-build-entries", 0),
                context.settings().getInt("airlock.modal.emulator.image-build-cut-after", 0),
                new java.util.concurrent.CopyOnWriteArrayList<>());
        this.imageBuilderVersion = context.settings().get("airlock.modal.emulator.image-builder-version", "2024.10");
        this.jwt = jwt;
        this.jwtTtl = jwtTtl;
        this.defaultTimeout = defaultTimeout;
        this.snapshots = new SnapshotImages(context.stateDir().resolve("images"));
        this.creationRate = SandboxCreationRate.from(context.settings());
    }

    /** Whether the service knows {@code imageId}: one an ImageGetOrCreate answered, or a snapshot's. */
    boolean knowsImage(String imageId) {
        return images.containsKey(imageId) || snapshots.contains(imageId);
    }

    static String id(String prefix) {
        StringBuilder sb = new StringBuilder(prefix);
        for (int i = 0; i < 22; i++) {
            sb.append(ALNUM.charAt(RANDOM.nextInt(ALNUM.length())));
        }
        return sb.toString();
    }

    void routerUrl(String url) {
        this.routerUrl = url;
    }

    String routerUrl() {
        return routerUrl;
    }

    String routerJwt(String taskId) {
        return jwt.issue(taskId, Instant.now().plus(jwtTtl).getEpochSecond());
    }

    /** The longest sandbox lifetime the service grants: 24 hours. */
    static final int MAX_TIMEOUT_SECS = 24 * 60 * 60;
    /** The most CPU one sandbox may ask for: 64 cores. */
    static final int MAX_MILLI_CPU = 64_000;
    /** The most memory one sandbox may ask for: 336 GiB. */
    static final int MAX_MEMORY_MB = 336 * 1024;

    /**
     * The service's limits on a sandbox definition, refused INVALID_ARGUMENT before anything is
     * made: a timeout over 24 hours, more than 64 cores or more than 336 GiB of memory.
     */
    static void checkLimits(Sandbox def) {
        long timeout = Integer.toUnsignedLong(def.getTimeoutSecs());
        if (timeout > MAX_TIMEOUT_SECS) {
            throw Status.INVALID_ARGUMENT.withDescription("Sandbox timeout of " + timeout
                    + " seconds exceeds the maximum of 86400 seconds (24 hours)").asRuntimeException();
        }
        long milliCpu = Integer.toUnsignedLong(def.getResources().getMilliCpu());
        if (milliCpu > MAX_MILLI_CPU) {
            throw Status.INVALID_ARGUMENT.withDescription("CPU request of " + milliCpu / 1000.0
                    + " cores exceeds the maximum of 64 cores").asRuntimeException();
        }
        long memoryMb = Integer.toUnsignedLong(def.getResources().getMemoryMb());
        if (memoryMb > MAX_MEMORY_MB) {
            throw Status.INVALID_ARGUMENT.withDescription("Memory request of " + memoryMb
                    + " MiB exceeds the maximum of " + MAX_MEMORY_MB + " MiB (336 GiB)").asRuntimeException();
        }
    }

    private static final java.util.regex.Pattern CIDR = java.util.regex.Pattern.compile(
            "((25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1?\\d?\\d)(/(3[0-2]|[12]?\\d))?");

    /**
     * The network asked: not blocked and allowlisted at once (the SDKs refuse that pair too), an
     * allowlist only with its type, each range an IPv4 CIDR. Refused INVALID_ARGUMENT before
     * anything is made.
     */
    static void checkNetwork(Sandbox def) {
        dev.airlock.modal.proto.NetworkAccess n = def.getNetworkAccess();
        boolean listed = n.getAllowedCidrsCount() + n.getAllowedDomainsCount() > 0;
        if (listed && (def.getBlockNetwork() || n.getNetworkAccessType() != 3)) {
            throw Status.INVALID_ARGUMENT.withDescription("allowed CIDRs and domains need network access type ALLOWLIST"
                    + " and an unblocked network").asRuntimeException();
        }
        for (String c : n.getAllowedCidrsList()) {
            if (!CIDR.matcher(c).matches()) {
                throw Status.INVALID_ARGUMENT.withDescription("invalid CIDR in the allowlist: " + c).asRuntimeException();
            }
        }
    }

    /**
     * A sandbox-level pseudo-terminal is refused INVALID_ARGUMENT (emulator wording), never
     * dropped: it is for the sandbox's entrypoint, which the emulator does not run. An exec's
     * {@code pty_info} is emulated ({@link PtyExec}).
     */
    static void checkPty(Sandbox def) {
        if (def.hasPtyInfo() && def.getPtyInfo().getEnabled()) {
            throw Status.INVALID_ARGUMENT.withDescription("pty_info on a sandbox is not supported by this emulator (it runs no"
                    + " entrypoint); exec a command with a pty instead").asRuntimeException();
        }
    }

    /**
     * An entrypoint ({@code entrypoint_args}, the SDK's {@code command}) is refused INVALID_ARGUMENT
     * (emulator wording), never dropped: the service runs it as the sandbox's main process and ends
     * the sandbox with it, which this emulator does not. A sandbox without one stays up until its
     * timeout or a terminate, as on the service.
     */
    static void checkEntrypoint(Sandbox def) {
        if (def.getEntrypointArgsCount() > 0) {
            throw Status.INVALID_ARGUMENT.withDescription("entrypoint_args on a sandbox are not run by this emulator;"
                    + " create it without a command and exec the command instead").asRuntimeException();
        }
    }

    /** Each declared port a TCP port, once. */
    static void checkPorts(Sandbox def) {
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        for (dev.airlock.modal.proto.PortSpec p : def.getOpenPorts().getPortsList()) {
            if (p.getPort() < 1 || p.getPort() > 65535) {
                throw Status.INVALID_ARGUMENT.withDescription("open port " + Integer.toUnsignedString(p.getPort())
                        + " is not a TCP port (1-65535)").asRuntimeException();
            }
            if (!seen.add(p.getPort())) {
                throw Status.INVALID_ARGUMENT.withDescription("port " + p.getPort() + " is declared twice").asRuntimeException();
            }
        }
    }

    /**
     * Creates a sandbox: V1 ids are {@code sb-} and 22 alphanumerics (the SDKs pick the RPC family
     * by that shape), V2 ids {@code sb2-} and 22.
     */
    Box create(Sandbox def, boolean v2) {
        return create(def, v2, "", Map.of());
    }

    Box create(Sandbox def, boolean v2, String appId, Map<String, String> tags) {
        checkLimits(def);
        checkNetwork(def);
        checkPorts(def);
        checkPty(def);
        checkEntrypoint(def);
        if (!knowsImage(def.getImageId())) {
            throw SnapshotImages.unknown(def.getImageId());
        }
        String name = def.hasName() && !def.getName().isEmpty() ? def.getName() : null;
        synchronized (byId) {
            if (name != null && running(appId, name).isPresent()) {
                throw Status.ALREADY_EXISTS.withDescription("a sandbox named '" + name
                        + "' is already running in this app; names are unique among an app's running sandboxes")
                        .asRuntimeException();
            }
            return make(def, v2, appId, name, tags);
        }
    }

    /** The app's running sandbox of that name (any family). */
    private java.util.Optional<Box> running(String appId, String name) {
        return byId.values().stream().filter(b -> name.equals(b.name) && appId.equals(b.appId) && !b.result.isDone()).findFirst();
    }

    /**
     * The sandbox of the family named {@code name} in the app {@code appName} of the environment:
     * the running one, else (with {@code includeTerminated}) the newest finished one. NOT_FOUND
     * otherwise, as the service answers (the SDK turns it into its "not found in App" error).
     */
    Box byName(String environment, String appName, String name, boolean v2, boolean includeTerminated) {
        String appId = apps.get(appKey(environment, appName));
        java.util.Optional<Box> found = appId == null ? java.util.Optional.empty() : byId.values().stream()
                .filter(b -> b.v2 == v2 && name.equals(b.name) && appId.equals(b.appId))
                .filter(b -> includeTerminated || !b.result.isDone())
                .sorted(java.util.Comparator.comparing((Box b) -> b.result.isDone()).thenComparing(
                        java.util.Comparator.comparingDouble((Box b) -> b.createdAt).reversed()))
                .findFirst();
        return found.orElseThrow(() -> Status.NOT_FOUND.withDescription("Sandbox with name '" + name
                + "' not found in App '" + appName + "'").asRuntimeException());
    }

    /** The key of an app in {@link #apps}: its environment (empty: the default, "main") and name. */
    static String appKey(String environment, String appName) {
        return (environment.isEmpty() ? "main" : environment) + "/" + appName;
    }

    private Box make(Sandbox def, boolean v2, String appId, String name, Map<String, String> tags) {
        String id = id(v2 ? "sb2-" : "sb-");
        String task = id("ta-");
        EmulatedSandbox sb = EmulatedSandbox.create(id, def.getImageId(), context.stateDir().resolve(id), "/root",
                context.isolation(), context.journal());
        if (snapshots.contains(def.getImageId())) {
            try {
                snapshots.restore(def.getImageId(), sb.root());
            } catch (RuntimeException e) {
                sb.close();
                throw e;
            }
        }
        Map<Integer, Tunnel> tunnels = new java.util.TreeMap<>();
        try {
            for (dev.airlock.modal.proto.PortSpec p : def.getOpenPorts().getPortsList()) {
                tunnels.put(p.getPort(), new Tunnel(dev.airlock.emulator.PortEdge.open(sb, p.getPort()), p.getUnencrypted()));
            }
        } catch (java.io.IOException | RuntimeException e) {
            sb.close();
            throw Status.INTERNAL.withDescription("could not open the tunnels: " + e.getMessage()).asRuntimeException();
        }
        String workdir = def.hasWorkdir() && !def.getWorkdir().isBlank() ? def.getWorkdir() : "/";
        if (!workdir.equals("/")) {
            try {
                sb.mkdirs(workdir, 0755);
            } catch (java.io.IOException e) {
                sb.close();
                throw Status.INVALID_ARGUMENT.withDescription("workdir " + workdir + ": " + e.getMessage()).asRuntimeException();
            }
        }
        Instant now = Instant.now();
        Box box = new Box(id, task, v2, sb, def.getEnvironmentVariables().getContentsMap(), workdir, appId, name, tags,
                now.getEpochSecond() + now.getNano() / 1e9);
        // Emulated commands always run in a network namespace of their own (no route out), which is
        // what block_network promises; what the create asked is kept for tests to read.
        box.tunnels.putAll(tunnels);
        box.networkBlocked = def.getBlockNetwork() || def.getNetworkAccess().getNetworkAccessType() == 2;
        // An allowlisted sandbox reaches nothing here either: no destination it names is reachable
        // from an emulated sandbox, which is stricter than the service, never kinder.
        box.networkAccess = def.getNetworkAccess();
        byId.put(id, box);
        byTask.put(task, box);
        int timeout = def.getTimeoutSecs() == 0 ? defaultTimeout : def.getTimeoutSecs();
        timers.schedule(() -> finish(box, 4, "sandbox timed out after " + timeout + "s"), timeout, TimeUnit.SECONDS);
        return box;
    }

    /**
     * One page of the sandboxes of a family, newest first: those created before {@code before}
     * (0: no bound), of {@code appId} when given, carrying at least {@code tags}, running unless
     * {@code includeFinished}.
     */
    java.util.List<Box> list(boolean v2, String appId, double before, Map<String, String> tags, boolean includeFinished) {
        return byId.values().stream()
                .filter(b -> b.v2 == v2)
                .filter(b -> appId.isEmpty() || appId.equals(b.appId))
                .filter(b -> before == 0 || b.createdAt < before)
                .filter(b -> b.tags.entrySet().containsAll(tags.entrySet()))
                .filter(b -> includeFinished || !b.result.isDone())
                .sorted(java.util.Comparator.comparingDouble((Box b) -> b.createdAt).reversed())
                .limit(LIST_PAGE)
                .toList();
    }

    /** Sandboxes per list page; small, so the clients' paging is exercised. */
    static final int LIST_PAGE = 3;

    Box sandbox(String id) {
        Box b = byId.get(id);
        if (b == null) {
            throw Status.NOT_FOUND.withDescription("no sandbox " + id).asRuntimeException();
        }
        return b;
    }

    /** The task's sandbox, if it is running; router calls on a finished one fail like the service's. */
    Box task(String taskId) {
        Box b = byTask.get(taskId);
        if (b == null) {
            throw Status.NOT_FOUND.withDescription("no task " + taskId).asRuntimeException();
        }
        return b;
    }

    /** Ends the sandbox once with {@code status} (3 TERMINATED, 4 TIMEOUT); later calls change nothing. */
    GenericResult finish(Box box, int status, String why) {
        GenericResult r = GenericResult.newBuilder().setStatus(status).setException(why)
                .setExitcode(status == 4 ? 124 : 137).build();
        if (box.result.complete(r)) {
            box.sandbox.stop();
            box.execs.values().forEach(e -> {
                e.exit.complete(dev.airlock.emulator.SandboxProcess.Exit.signal(9)); // killed with the sandbox
                e.stdout.delete();
                e.stderr.delete();
            });
        }
        return box.result.join();
    }

    int live() {
        return (int) byId.values().stream().filter(b -> !b.result.isDone()).count();
    }

    void close() {
        timers.shutdownNow();
        for (Box b : byId.values()) {
            finish(b, 3, "emulator stopped");
            b.sandbox.close();
        }
        byId.clear();
        byTask.clear();
        snapshots.close();
    }
}
