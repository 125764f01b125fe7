package dev.airlock.vercel.emulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.airlock.NoSuchPathException;
import dev.airlock.emulator.EmulatedSandbox;
import dev.airlock.emulator.Emulator;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.EmulatorCredentials;
import dev.airlock.emulator.EmulatorHttpServer;
import dev.airlock.emulator.EmulatorHttpServer.Request;
import dev.airlock.emulator.EmulatorHttpServer.Response;
import dev.airlock.emulator.PortEdge;
import dev.airlock.emulator.RateLimits;
import dev.airlock.emulator.SandboxProcess;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.Reader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;

/**
 * Vercel Sandbox's REST API on loopback, as the official SDK ({@code @vercel/sandbox} 3.5) and
 * Airlock's client speak it. Responses have the shapes the SDK validates (its zod schemas);
 * errors are {@code {"error":{"code","message"}}}.
 *
 * <pre>
 * POST   /v3/sandboxes, /v2/sandboxes              sandbox-create   {sandbox, session, routes}
 * GET    /v2/sandboxes?project=&amp;tags=k:v&amp;limit=&amp;cursor=  sandbox-list  {sandboxes, pagination {count, next}}
 * GET    /v2/sandboxes/{name}[?resume=true]        sandbox-get      {sandbox, session, routes, resumed}
 * DELETE /v2/sandboxes/{name}                      sandbox-delete   {sandbox} | 404
 * GET    /v2/sandboxes/sessions/{sid}              session-get      {session, routes}
 * POST   .../sessions/{sid}/stop                   session-stop     {session, sandbox}
 * POST   .../sessions/{sid}/extend-timeout         extend-timeout   {session}
 * POST   .../sessions/{sid}/cmd                    cmd              {command} | NDJSON with wait
 * GET    .../cmd/{cid}[?wait=true]                 cmd-get          {command}
 * GET    .../cmd/{cid}/logs                        cmd-logs         NDJSON {stream, data}
 * POST   .../cmd/{cid}/kill                        cmd-kill         {command}
 * POST   .../fs/write   (gzip tar, x-cwd)          fs-write         {}
 * POST   .../fs/read    {path, cwd}                fs-read          bytes | 404
 * POST   .../fs/mkdir   {path, cwd}                fs-mkdir         {}
 * POST   .../sessions/{sid}/snapshot {expiration?}  snapshot-create  {snapshot, session}: the session stops
 * GET    /v2/sandboxes/snapshots/{id}              snapshot-get     {snapshot} | 404
 * DELETE /v2/sandboxes/snapshots/{id}              snapshot-delete  {snapshot} (status deleted) | 404
 * PATCH  /v2/sandboxes/{name}  {currentSnapshotId}  sandbox-update   {sandbox, routes}
 * </pre>
 *
 * <p>Snapshots: taking one stops the session, as the SDK documents ("this session will be stopped as
 * part of the snapshot creation process"); the sandbox's {@code currentSnapshotId} becomes it, and a
 * resume ({@code GET ?resume=true}) boots the new session from it. A create with
 * {@code source: {type: "snapshot", snapshotId}} starts from a copy of its files; a snapshot that
 * does not exist, was deleted or expired is 410 {@code snapshot_not_found}, as the service answers.
 * A session booted from a snapshot (create or resume) names it as {@code sourceSnapshotId}, as the
 * SDK's Session does (the sandbox listing has no such field; gc reads it from the session).
 *
 * Auth: every call carries {@code Authorization: Bearer VERCEL_TOKEN} and {@code ?teamId=VERCEL_TEAM_ID}
 * (the official SDK refuses a token without a team, and the service scopes every sandbox call
 * to one); both come from the emulator's environment, else are made at start. A missing token,
 * a wrong one, or a missing or foreign team is refused 403 {@code forbidden}, as the API does.
 *
 * <p>Rate limit: creates count their vCPUs against the team's vCPU allocation rate, the Pro plan's
 * documented 400 vCPUs per minute ({@link VcpuAllocation}; the setting
 * {@code airlock.vercel.emulator.rate-limit.vcpu-allocation=VCPUS/SECONDS} replaces it). Every
 * create answer carries {@code X-RateLimit-Limit}, {@code -Remaining} and {@code -Reset} (epoch
 * seconds); one over the rate is 429 {@code rate_limited} with {@code Retry-After} (seconds) and
 * {@code error.limit{total, remaining, reset, resetMs}}, and makes nothing.
 *
 * <p>A stopped session answers 410 {@code sandbox_stopped} on everything but get and stop; its
 * logs are gone. A session past its timeout stops by itself.
 */
public final class VercelEmulator implements Emulator {
    static final String NDJSON = "application/x-ndjson";
    private static final String SESSIONS = "/v2/sandboxes/sessions/{sid}";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long DEFAULT_TIMEOUT_MS = 5 * 60_000L;
    /** The sandbox's user (uid 1000 here), as on the service; a command with {@code sudo} runs as root. */
    private static final String USER = "vercel-sandbox";

    /** The runtimes the SDK documents (its {@code RUNTIMES}); another is refused (the emulator's wording). */
    static final List<String> RUNTIMES = List.of("node22", "node24", "node26", "python3.13");
    /** The most ports a sandbox exposes, as the SDK documents. */
    public static final int MAX_PORTS = 15;
    /** The most vCPUs a sandbox gets on the Pro plan (the emulated one): Hobby 4, Pro 8, Enterprise 32. */
    public static final int MAX_VCPUS = 8;
    /** The longest a sandbox lives on the Pro plan, in ms, with its extensions: 24 hours (Hobby 45 minutes). */
    public static final long MAX_TIMEOUT_MS = 24 * 60 * 60_000L;

    /** The service's variables for the token and the team this emulator accepts. */
    public static final String TOKEN_VARIABLE = "VERCEL_TOKEN";
    public static final String TEAM_VARIABLE = "VERCEL_TEAM_ID";

    private final EmulatorContext context;
    private final EmulatorCredentials credentials;
    private final EmulatorHttpServer server;
    private final Map<String, SandboxState> sandboxes = new ConcurrentHashMap<>();
    private final Map<String, SessionState> sessions = new ConcurrentHashMap<>();
    private final List<StagedWrite> writes = Collections.synchronizedList(new ArrayList<>());
    private final ScheduledExecutorService timers;
    private final SnapshotStore snapshots;
    /** A sandbox listing's page size when the call names none, and the most it may name (the service's are not documented). */
    static final int PAGE = 20;
    static final int MAX_PAGE = 100;
    /** The cursors given out: the last sandbox name of a page and its creation time. */
    private final Map<String, Long> cursors = new ConcurrentHashMap<>();
    private final VcpuAllocation allocation;

    /** A file {@code fs/write} created, with the mode its tar header carried and the mode it got. */
    public record StagedWrite(String sessionId, String path, int headerMode, int fileMode, long size) {
    }

    public VercelEmulator(EmulatorContext context) throws IOException {
        this.context = context;
        this.credentials = EmulatorCredentials.from(context.environment()).variable(TOKEN_VARIABLE, "")
                .variable(TEAM_VARIABLE, "team_").build();
        this.snapshots = new SnapshotStore(context.stateDir().resolve("snapshots"));
        this.allocation = VcpuAllocation.from(context.settings());
        this.timers = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "vercel-emulator-timeouts");
            t.setDaemon(true);
            return t;
        });
        this.server = EmulatorHttpServer.builder()
                .auth(this::authenticate)
                .faults(context.faults())
                .journal(context.journal())
                .route("POST", "/v3/sandboxes", "sandbox-create", this::create)
                .route("POST", "/v2/sandboxes", "sandbox-create", this::create)
                .route("GET", "/v2/sandboxes", "sandbox-list", this::list)
                .route("GET", SESSIONS, "session-get", this::sessionGet)
                .route("POST", SESSIONS + "/stop", "session-stop", this::stop)
                .route("POST", SESSIONS + "/extend-timeout", "extend-timeout", this::extend)
                .route("POST", SESSIONS + "/cmd", "cmd", this::cmd)
                .route("GET", SESSIONS + "/cmd/{cid}", "cmd-get", this::cmdGet)
                .route("GET", SESSIONS + "/cmd/{cid}/logs", "cmd-logs", this::logs)
                .route("POST", SESSIONS + "/cmd/{cid}/kill", "cmd-kill", this::kill)
                .route("POST", SESSIONS + "/fs/write", "fs-write", this::fsWrite)
                .route("POST", SESSIONS + "/fs/read", "fs-read", this::fsRead)
                .route("POST", SESSIONS + "/fs/mkdir", "fs-mkdir", this::fsMkdir)
                .route("POST", SESSIONS + "/snapshot", "snapshot-create", this::snapshotCreate)
                .route("GET", "/v2/sandboxes/snapshots/{id}", "snapshot-get", this::snapshotGet)
                .route("DELETE", "/v2/sandboxes/snapshots/{id}", "snapshot-delete", this::snapshotDelete)
                .route("PATCH", "/v2/sandboxes/{name}", "sandbox-update", this::sandboxUpdate)
                .route("GET", "/v2/sandboxes/{name}", "sandbox-get", this::sandboxGet)
                .route("DELETE", "/v2/sandboxes/{name}", "sandbox-delete", this::delete)
                .hostRoute(h -> h.endsWith("." + PortProxy.DOMAIN), "port-route", this::portRoute)
                .start(context.listen());
        timers.scheduleWithFixedDelay(this::expire, 1, 1, TimeUnit.SECONDS);
    }

    @Override
    public URI url() {
        return server.url();
    }

    @Override
    public EmulatorCredentials credentials() {
        return credentials;
    }

    /**
     * Vercel's answers to bad credentials: 403 {@code forbidden} with {@code missingToken} or
     * {@code invalidToken} for the token, plain 403 {@code forbidden} for a team the token is not
     * in (or none).
     */
    private Optional<EmulatorHttpServer.Refusal> authenticate(Request req) {
        Optional<String> token = req.bearer();
        if (token.isEmpty()) {
            return forbidden("The request is missing an authentication token", "missingToken");
        }
        if (!credentials.accepts(TOKEN_VARIABLE, token.get())) {
            return forbidden("Not authorized", "invalidToken");
        }
        Optional<String> team = req.query("teamId").filter(t -> !t.isBlank());
        if (team.isEmpty()) {
            return forbidden("Not authorized: this call needs the team it acts in (teamId)", null);
        }
        if (!credentials.accepts(TEAM_VARIABLE, team.get())) {
            return forbidden("Not authorized: the token has no access to this team", null);
        }
        return Optional.empty();
    }

    private static Optional<EmulatorHttpServer.Refusal> forbidden(String message, String flag) {
        ObjectNode error = JSON.createObjectNode().put("code", "forbidden").put("message", message);
        if (flag != null) {
            error.put(flag, true);
        }
        ObjectNode body = JSON.createObjectNode();
        body.set("error", error);
        return Optional.of(new EmulatorHttpServer.Refusal(403, body.toString()));
    }

    /** Every file {@code fs/write} made, in order (tests check staged files were 0600). */
    public List<StagedWrite> writes() {
        synchronized (writes) {
            return List.copyOf(writes);
        }
    }

    /** The names of the sandboxes that exist (not deleted). */
    public List<String> sandboxNames() {
        return List.copyOf(sandboxes.keySet());
    }

    /** The network policy mode the create of this sandbox asked for (allow-all when it named none). */
    /** A custom network policy's domains, then its ranges, as the create sent them. */
    public List<List<String>> allowLists(String sandboxName) {
        SandboxState sb = sandboxes.get(sandboxName);
        return List.of(sb.allowedDomains, sb.allowedCidrs);
    }

    public String networkMode(String sandboxName) {
        return sandboxes.get(sandboxName).networkMode;
    }

    /**
     * Where {@code sandboxPath} of a sandbox's running session lives on this host, resolved as the
     * sandbox would (tests change a sandbox's files behind the API's back with it).
     */
    public java.nio.file.Path hostPath(String sandboxName, String sandboxPath) {
        SessionState s = sessions.values().stream().filter(x -> x.owner.name.equals(sandboxName) && x.status().equals("running"))
                .findFirst().orElseThrow(() -> new IllegalArgumentException("no running session of " + sandboxName));
        return s.sandbox.resolve(sandboxPath).host();
    }

    /** How many sessions are running now. */
    public long runningSessions() {
        return sessions.values().stream().filter(s -> s.status().equals("running")).count();
    }

    @Override
    public void close() {
        timers.shutdownNow();
        server.close();
        for (SessionState s : sessions.values()) {
            s.sandbox.close();
        }
        sessions.clear();
        sandboxes.clear();
        snapshots.close();
    }

    /** Whether snapshot {@code id} exists and is not deleted (tests check a run left none). */
    public boolean snapshotExists(String id) {
        return snapshots.get(id).map(s -> s.status().equals("created")).orElse(false);
    }

    // ---------------------------------------------------------------- state

    private final class SandboxState {
        final String name;
        final String projectId;
        final boolean persistent;
        final Map<String, String> tags;
        final Map<String, String> env;
        final int vcpus;
        final String image;
        final String runtime;
        final long createdAt = System.currentTimeMillis();
        volatile long updatedAt = createdAt;
        volatile SessionState current;
        /** The create's network policy mode (allow-all, deny-all, or custom for lists); commands never have a route out here. */
        volatile String networkMode = "allow-all";
        /** A custom policy's domains and ranges, as the create sent them ({@code allow}, {@code subnets.allow}). */
        volatile List<String> allowedDomains = List.of();
        volatile List<String> allowedCidrs = List.of();
        final long timeout;
        /** The snapshot a resume boots from: the last one taken of it, or one set by an update; null for none. */
        volatile String currentSnapshotId;
        /** Each exposed port's subdomain, in the order the create asked for them. */
        final Map<Integer, String> routes = new LinkedHashMap<>();

        SandboxState(String name, String projectId, boolean persistent, Map<String, String> tags, Map<String, String> env,
                     int vcpus, String image, String runtime, long timeout, List<Integer> ports) {
            this.name = name;
            this.projectId = projectId;
            this.persistent = persistent;
            this.tags = tags;
            this.env = env;
            this.vcpus = vcpus;
            this.image = image;
            this.runtime = runtime;
            this.timeout = timeout;
            for (int port : ports) {
                routes.put(port, "sb-" + UUID.randomUUID().toString().replace("-", "").substring(0, 16) + "-" + port);
            }
        }

        /**
         * The SDK's {@code routes}: {@code {url, subdomain, port}} per exposed port. The {@code url}
         * stands for the service's edge: the current session's {@link PortEdge} on this machine's
         * loopback (a new session has new edges); the subdomain is the sandbox's, which the SDK's
         * {@code domain(port)} builds {@code https://SUBDOMAIN.vercel.run} from (see {@link #portRoute}).
         */
        com.fasterxml.jackson.databind.node.ArrayNode routesJson() {
            return routesJson(current);
        }

        /** The routes as session {@code s} serves them. */
        com.fasterxml.jackson.databind.node.ArrayNode routesJson(SessionState s) {
            var arr = JSON.createArrayNode();
            routes.forEach((port, sub) -> arr.addObject().put("url", s.edges.get(port).url().toString())
                    .put("subdomain", sub).put("port", port));
            return arr;
        }

        ObjectNode json() {
            ObjectNode n = JSON.createObjectNode();
            n.put("name", name).put("persistent", persistent).put("region", "iad1").put("vcpus", vcpus)
                    .put("memory", vcpus * 2048).put("timeout", timeout).put("createdAt", createdAt).put("updatedAt", updatedAt)
                    .put("currentSessionId", current.id).put("status", current.status()).put("cwd", current.cwd);
            if (currentSnapshotId != null) {
                n.put("currentSnapshotId", currentSnapshotId);
            }
            if (runtime != null) {
                n.put("runtime", runtime);
            } else {
                n.put("image", image);
            }
            ObjectNode t = n.putObject("tags");
            tags.forEach(t::put);
            return n;
        }
    }

    private final class SessionState {
        final String id = "sbx_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24);
        final SandboxState owner;
        final EmulatedSandbox sandbox;
        final String cwd = "/vercel/sandbox";
        final long requestedAt = System.currentTimeMillis();
        final long startedAt = requestedAt;
        volatile long timeout;
        volatile long updatedAt = requestedAt;
        volatile long stoppedAt;
        volatile String status = "running";
        final Map<String, CommandState> commands = new ConcurrentHashMap<>();
        /** Each routed port's edge: open while the session runs (they close when its sandbox stops). */
        final Map<Integer, PortEdge> edges = new ConcurrentHashMap<>();

        SessionState(SandboxState owner) throws IOException {
            this(owner, null);
        }

        /** The snapshot this session booted from ({@code sourceSnapshotId}); null for none. */
        final String sourceSnapshotId;

        /** A new session of {@code owner}, its files those of {@code from} when not null. */
        SessionState(SandboxState owner, SnapshotStore.Snapshot from) throws IOException {
            this.owner = owner;
            this.sourceSnapshotId = from == null ? null : from.id();
            this.timeout = owner.timeout;
            this.sandbox = EmulatedSandbox.create(id, owner.runtime != null ? owner.runtime : owner.image,
                    context.stateDir().resolve(id), new EmulatedSandbox.User(USER, 1000, cwd), context.isolation(),
                    context.journal());
            try {
                if (from != null) {
                    snapshots.restoreInto(from, sandbox.root());
                }
                for (int port : owner.routes.keySet()) {
                    edges.put(port, PortEdge.open(sandbox, port));
                }
            } catch (IOException | RuntimeException e) {
                sandbox.close();
                throw e;
            }
        }

        synchronized String status() {
            return status;
        }

        /** Stops once: the processes go, the logs with them. */
        void stop() {
            try {
                stop("stopping", null);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e); // no step between: not reached
            }
        }

        /**
         * Stops once, in state {@code passing} meanwhile, running {@code whileStopped} on the stopped
         * processes' files before the session counts as stopped; false when it was not running.
         */
        boolean stop(String passing, IoStep whileStopped) throws IOException {
            synchronized (this) {
                if (!status.equals("running")) {
                    return false;
                }
                status = passing;
            }
            sandbox.stop();
            commands.values().forEach(CommandState::sandboxStopped);
            try {
                if (whileStopped != null) {
                    whileStopped.run();
                }
            } finally {
                markStopped();
            }
            return true;
        }

        private void markStopped() {
            synchronized (this) {
                status = "stopped";
                stoppedAt = System.currentTimeMillis();
                updatedAt = stoppedAt;
            }
            owner.updatedAt = stoppedAt;
        }

        ObjectNode json() {
            ObjectNode n = JSON.createObjectNode();
            n.put("id", id).put("memory", owner.vcpus * 2048).put("vcpus", owner.vcpus).put("region", "iad1")
                    .put("timeout", timeout).put("status", status()).put("requestedAt", requestedAt)
                    .put("startedAt", startedAt).put("createdAt", requestedAt).put("cwd", cwd).put("updatedAt", updatedAt);
            if (owner.runtime != null) {
                n.put("runtime", owner.runtime);
            }
            ObjectNode policy = n.putObject("networkPolicy").put("mode", owner.networkMode);
            if (owner.networkMode.equals("custom")) {
                // The response's (legacy) shape, which the SDK reads back into {allow, subnets}.
                owner.allowedDomains.forEach(policy.putArray("allowedDomains")::add);
                owner.allowedCidrs.forEach(policy.putArray("allowedCIDRs")::add);
            }
            if (stoppedAt != 0) {
                n.put("stoppedAt", stoppedAt).put("duration", stoppedAt - startedAt);
            }
            if (sourceSnapshotId != null) {
                n.put("sourceSnapshotId", sourceSnapshotId);
            }
            return n;
        }
    }

    /** A step that may fail with an {@link IOException}. */
    private interface IoStep {
        void run() throws IOException;
    }

    /** One command: its process, its output as log entries (on disk until the session stops, {@link CommandLog}), its end. */
    private static final class CommandState {
        final String id;
        final String name;
        final List<String> args;
        final String cwd;
        final String sessionId;
        final long startedAt = System.currentTimeMillis();
        final SandboxProcess process;
        private final CommandLog logs;
        private int openStreams = 2;
        private Integer exitCode;
        private long durationMs;
        private long exitedAt;
        private boolean gone;

        CommandState(String id, String name, List<String> args, String cwd, String sessionId, SandboxProcess process,
                     Path logDir) {
            this.id = id;
            this.logs = new CommandLog(logDir);
            this.name = name;
            this.args = args;
            this.cwd = cwd;
            this.sessionId = sessionId;
            this.process = process;
        }

        void start() {
            pump("stdout", process.stdout());
            pump("stderr", process.stderr());
            Thread w = new Thread(() -> {
                int code;
                try {
                    code = process.waitFor();
                } catch (InterruptedException e) {
                    return;
                }
                synchronized (this) {
                    exitCode = code;
                    exitedAt = System.currentTimeMillis();
                    durationMs = exitedAt - startedAt;
                    notifyAll();
                }
            }, "vercel-emulator-wait-" + id);
            w.setDaemon(true);
            w.start();
        }

        private void pump(String stream, InputStream in) {
            Thread t = new Thread(() -> {
                char[] buf = new char[8192];
                try (Reader r = new InputStreamReader(in, StandardCharsets.UTF_8)) {
                    int n;
                    while ((n = r.read(buf)) >= 0) {
                        if (n > 0) {
                            String data = new String(buf, 0, n);
                            synchronized (this) {
                                logs.add(stream, data);
                                notifyAll();
                            }
                        }
                    }
                } catch (IOException ignored) {
                    // the process went; what was read is kept
                } finally {
                    synchronized (this) {
                        openStreams--;
                        notifyAll();
                    }
                }
            }, "vercel-emulator-" + stream + "-" + id);
            t.setDaemon(true);
            t.start();
        }

        synchronized void sandboxStopped() {
            gone = true;
            logs.delete();
            if (exitCode == null) {
                exitCode = 128 + 9;
                exitedAt = System.currentTimeMillis();
                durationMs = exitedAt - startedAt;
            }
            notifyAll();
        }

        synchronized Integer exitCode() {
            return exitCode;
        }

        synchronized void awaitExit() throws InterruptedException {
            while (exitCode == null) {
                wait();
            }
        }

        /**
         * Log line {@code index}, waiting for it; empty once the output is complete (both streams
         * closed, or 2 s after the exit when a background job holds them) or the session stopped.
         */
        synchronized Optional<String[]> logAt(int index) throws InterruptedException {
            while (true) {
                if (gone) {
                    return Optional.empty();
                }
                if (index < logs.size()) {
                    return Optional.of(logs.get(index));
                }
                if (openStreams == 0 && exitCode != null) {
                    return Optional.empty();
                }
                if (exitCode != null) {
                    long left = exitedAt + 2000 - System.currentTimeMillis();
                    if (left <= 0) {
                        return Optional.empty();
                    }
                    wait(left);
                } else {
                    wait();
                }
            }
        }

        synchronized boolean gone() {
            return gone;
        }

        ObjectNode json() {
            ObjectNode n = JSON.createObjectNode();
            n.put("id", id).put("name", name);
            args.forEach(n.putArray("args")::add);
            n.put("cwd", cwd).put("sessionId", sessionId);
            Integer code = exitCode();
            if (code == null) {
                n.putNull("exitCode");
            } else {
                n.put("exitCode", code.intValue());
                synchronized (this) {
                    n.put("durationMs", durationMs);
                }
            }
            n.put("startedAt", startedAt);
            return n;
        }
    }

    private void expire() {
        long now = System.currentTimeMillis();
        for (SessionState s : sessions.values()) {
            if (s.status().equals("running") && now > s.startedAt + s.timeout) {
                s.stop();
            }
        }
    }

    // ---------------------------------------------------------------- sandboxes

    /** The plan's limits on a create, as a message, or null when it is within them. */
    private static String overLimit(int vcpus, long timeout, JsonNode ports) {
        if (vcpus < 1 || vcpus > MAX_VCPUS) {
            return "resources.vcpus must be between 1 and " + MAX_VCPUS + ", not " + vcpus;
        }
        if (timeout < 1 || timeout > MAX_TIMEOUT_MS) {
            return "timeout must be between 1 and " + MAX_TIMEOUT_MS + " ms (24 hours), not " + timeout;
        }
        if (ports.isArray() && ports.size() > MAX_PORTS) {
            return "a sandbox exposes at most " + MAX_PORTS + " ports, not " + ports.size();
        }
        return null;
    }

    private void create(Request req, Response resp) throws IOException {
        JsonNode body = body(req, resp);
        if (body == null) {
            return;
        }
        String projectId = text(body, "projectId");
        if (projectId == null || projectId.isBlank()) {
            resp.error(400, "bad_request", "projectId is required");
            return;
        }
        if (body.hasNonNull("runtime") && body.hasNonNull("image")) {
            resp.error(400, "bad_request", "runtime and image cannot be used together");
            return;
        }
        String runtime = text(body, "runtime");
        if (runtime != null && !RUNTIMES.contains(runtime)) {
            resp.error(400, "bad_request", "runtime must be one of " + String.join(", ", RUNTIMES) + ", not " + runtime);
            return;
        }
        String name = Optional.ofNullable(text(body, "name")).filter(s -> !s.isBlank())
                .orElse("sbx-" + UUID.randomUUID().toString().substring(0, 13));
        if (sandboxes.containsKey(name)) {
            resp.error(409, "conflict", "a sandbox named " + name + " already exists");
            return;
        }
        List<Integer> ports = new ArrayList<>();
        String badPorts = ports(body.path("ports"), ports);
        if (badPorts != null) {
            resp.error(400, "bad_request", badPorts);
            return;
        }
        int vcpus = body.path("resources").path("vcpus").asInt(2);
        long timeout = body.path("timeout").asLong(DEFAULT_TIMEOUT_MS);
        String over = overLimit(vcpus, timeout, body.path("ports"));
        if (over != null) {
            resp.error(400, "bad_request", over);
            return;
        }
        SnapshotStore.Snapshot from = null;
        JsonNode source = body.path("source");
        if (source.isObject() && "snapshot".equals(source.path("type").asText())) {
            String snapshotId = source.path("snapshotId").asText("");
            Optional<SnapshotStore.Snapshot> found = snapshots.get(snapshotId).filter(x -> x.usable(System.currentTimeMillis()));
            if (found.isEmpty()) {
                resp.error(410, "snapshot_not_found", "Snapshot not found: " + snapshotId);
                return;
            }
            from = found.get();
        }
        JsonNode policy = body.path("networkPolicy");
        String networkMode = policy.isObject() ? policy.path("mode").asText("custom") : "allow-all";
        if (!List.of("allow-all", "deny-all", "custom").contains(networkMode)) {
            resp.error(400, "bad_request", "networkPolicy.mode must be allow-all, deny-all or custom, not " + networkMode);
            return;
        }
        if (!allocated(vcpus, resp)) {
            return;
        }
        SandboxState sb = new SandboxState(name, projectId, body.path("persistent").asBoolean(false),
                strings(body.get("tags")), strings(body.get("env")), vcpus,
                Optional.ofNullable(text(body, "image")).orElse("vercel/sandbox/universal"), runtime, timeout, ports);
        sb.networkMode = networkMode;
        if (networkMode.equals("custom")) {
            JsonNode allow = policy.path("allow");
            List<String> domains = new ArrayList<>();
            (allow.isObject() ? allow.fieldNames() : texts(allow).iterator()).forEachRemaining(domains::add);
            sb.allowedDomains = List.copyOf(domains);
            sb.allowedCidrs = texts(policy.path("subnets").path("allow"));
        }
        SessionState s = new SessionState(sb, from);
        sb.current = s;
        sandboxes.put(name, sb);
        sessions.put(s.id, s);
        ObjectNode out = JSON.createObjectNode();
        out.set("sandbox", sb.json());
        out.set("session", s.json());
        out.set("routes", sb.routesJson());
        resp.json(200, out.toString());
    }

    /**
     * Counts the create's vCPUs against the team's vCPU allocation rate ({@link VcpuAllocation}),
     * with {@code X-RateLimit-Limit/Remaining/Reset} (reset in epoch seconds) on the answer; over
     * the rate, answers 429 {@code rate_limited} with {@code Retry-After} (seconds) and the
     * {@code limit} object of Vercel's API errors, and nothing is made.
     */
    private boolean allocated(int vcpus, Response resp) throws IOException {
        RateLimits.Decision d = allocation.acquire(vcpus);
        long resetMs = System.currentTimeMillis() + d.reset().toMillis();
        long resetS = (resetMs + 999) / 1000;
        resp.header("X-RateLimit-Limit", String.valueOf(d.limit().requests()));
        resp.header("X-RateLimit-Remaining", String.valueOf(d.remaining()));
        resp.header("X-RateLimit-Reset", String.valueOf(resetS));
        if (d.allowed()) {
            return true;
        }
        long wait = Math.max(1, (d.reset().toMillis() + 999) / 1000);
        resp.header("Retry-After", String.valueOf(wait));
        ObjectNode error = JSON.createObjectNode().put("code", "rate_limited")
                .put("message", "Rate limit exceeded: the vCPU allocation rate is " + d.limit().requests() + " vCPUs per "
                        + d.limit().window().toSeconds() + " s, " + d.remaining() + " left for " + vcpus + " asked; try again in "
                        + wait + " s");
        error.putObject("limit").put("total", d.limit().requests()).put("remaining", d.remaining()).put("reset", resetS)
                .put("resetMs", resetMs);
        ObjectNode body = JSON.createObjectNode();
        body.set("error", error);
        resp.json(429, body.toString());
        return false;
    }

    /** Reads {@code ports} into {@code out}; a message when they are not distinct TCP ports. */
    private static String ports(JsonNode ports, List<Integer> out) {
        if (ports.isMissingNode() || ports.isNull()) {
            return null;
        }
        if (!ports.isArray()) {
            return "ports must be an array of port numbers";
        }
        for (JsonNode p : ports) {
            if (!p.isIntegralNumber() || p.asInt() < 1 || p.asInt() > 65535) {
                return "ports must be port numbers between 1 and 65535, not " + p;
            }
            if (out.contains(p.asInt())) {
                return "port " + p.asInt() + " is listed twice";
            }
            out.add(p.asInt());
        }
        return null;
    }

    /**
     * A request to a port's public domain ({@code SUBDOMAIN.vercel.run}, sent here with that Host):
     * forwarded to the port inside the sandbox's running session. An unknown domain is 404, a
     * stopped sandbox 410.
     */
    private void portRoute(Request req, Response resp) throws IOException {
        String host = req.param("host");
        String sub = host.substring(0, host.length() - PortProxy.DOMAIN.length() - 1);
        for (SandboxState sb : sandboxes.values()) {
            for (Map.Entry<Integer, String> r : sb.routes.entrySet()) {
                if (r.getValue().equals(sub)) {
                    SessionState s = sb.current;
                    if (!s.status().equals("running")) {
                        resp.error(410, "sandbox_stopped", "the sandbox " + sb.name + " is " + s.status());
                        return;
                    }
                    PortProxy.forward(s.edges.get(r.getKey()), req, resp);
                    return;
                }
            }
        }
        resp.error(404, "not_found", "no sandbox port is served at " + host);
    }

    /**
     * {@code GET /v2/sandboxes}: the project's sandboxes (with a {@code tags=k:v} filter), oldest
     * first, {@code limit} a page (default {@value #PAGE}, at most {@value #MAX_PAGE}; another
     * value is 400); {@code pagination.next} is the cursor of the next page, null on the last, and
     * a cursor this listing did not give is 400.
     */
    private void list(Request req, Response resp) throws IOException {
        Optional<String> project = req.query("project");
        Optional<String> tag = req.query("tags");
        int limit;
        try {
            limit = req.query("limit").map(Integer::parseInt).orElse(PAGE);
        } catch (NumberFormatException e) {
            limit = -1;
        }
        if (limit < 1 || limit > MAX_PAGE) {
            resp.error(400, "bad_request", "limit must be a number from 1 to " + MAX_PAGE + ", not " + req.query("limit").orElse(""));
            return;
        }
        List<SandboxState> matching = new ArrayList<>();
        for (SandboxState sb : sandboxes.values()) {
            if (project.isPresent() && !project.get().equals(sb.projectId)) {
                continue;
            }
            if (tag.isPresent()) {
                int c = tag.get().indexOf(':');
                String k = c < 0 ? tag.get() : tag.get().substring(0, c);
                String v = c < 0 ? "" : tag.get().substring(c + 1);
                if (!v.equals(sb.tags.get(k))) {
                    continue;
                }
            }
            matching.add(sb);
        }
        matching.sort(java.util.Comparator.comparingLong((SandboxState sb) -> sb.createdAt).thenComparing(sb -> sb.name));
        int from = 0;
        Optional<String> cursor = req.query("cursor");
        if (cursor.isPresent()) {
            // The cursor is the last name of the page before (base64url), so a deleted sandbox does not lose it.
            String after;
            try {
                after = new String(java.util.Base64.getUrlDecoder().decode(cursor.get()), java.nio.charset.StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                after = null;
            }
            long afterCreated = after == null ? -1 : cursors.getOrDefault(after, -1L);
            if (afterCreated < 0) {
                resp.error(400, "bad_request", "invalid cursor: " + cursor.get());
                return;
            }
            String a = after;
            while (from < matching.size() && (matching.get(from).createdAt < afterCreated
                    || matching.get(from).createdAt == afterCreated && matching.get(from).name.compareTo(a) <= 0)) {
                from++;
            }
        }
        int to = Math.min(matching.size(), from + limit);
        ObjectNode out = JSON.createObjectNode();
        var arr = out.putArray("sandboxes");
        for (SandboxState sb : matching.subList(from, to)) {
            arr.add(sb.json());
        }
        var pagination = out.putObject("pagination").put("count", to - from);
        if (to < matching.size()) {
            SandboxState last = matching.get(to - 1);
            cursors.put(last.name, last.createdAt);
            pagination.put("next", java.util.Base64.getUrlEncoder().withoutPadding()
                    .encodeToString(last.name.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } else {
            pagination.putNull("next");
        }
        resp.json(200, out.toString());
    }

    private void sandboxGet(Request req, Response resp) throws IOException {
        SandboxState sb = sandboxes.get(req.param("name"));
        if (sb == null) {
            resp.error(404, "not_found", "no sandbox named " + req.param("name"));
            return;
        }
        boolean resumed = false;
        synchronized (sb) {
            if (req.query("resume").map("true"::equals).orElse(false) && !sb.current.status().equals("running")) {
                // A fresh session: from the sandbox's current snapshot where it has one, else empty (a
                // throwaway sandbox keeps no files of its own).
                SessionState s = new SessionState(sb, Optional.ofNullable(sb.currentSnapshotId).flatMap(snapshots::get)
                        .filter(x -> x.usable(System.currentTimeMillis())).orElse(null));
                sessions.put(s.id, s);
                sb.current = s;
                resumed = true;
            }
        }
        ObjectNode out = JSON.createObjectNode();
        out.set("sandbox", sb.json());
        out.set("session", sb.current.json());
        out.set("routes", sb.routesJson());
        out.put("resumed", resumed);
        resp.json(200, out.toString());
    }

    private void delete(Request req, Response resp) throws IOException {
        SandboxState sb = sandboxes.remove(req.param("name"));
        if (sb == null) {
            resp.error(404, "not_found", "no sandbox named " + req.param("name"));
            return;
        }
        for (SessionState s : new ArrayList<>(sessions.values())) {
            if (s.owner == sb) {
                s.stop();
                s.sandbox.close();
                sessions.remove(s.id);
            }
        }
        if (req.query("deleteOrphanSnapshots").map("true"::equals).orElse(false)) {
            snapshots.deleteOf(sb.name);
        }
        ObjectNode out = JSON.createObjectNode();
        out.set("sandbox", sb.json());
        resp.json(200, out.toString());
    }

    /** {@code PATCH /v2/sandboxes/{name}}: only {@code currentSnapshotId} is applied here (a snapshot that exists). */
    private void sandboxUpdate(Request req, Response resp) throws IOException {
        SandboxState sb = sandboxes.get(req.param("name"));
        if (sb == null) {
            resp.error(404, "not_found", "no sandbox named " + req.param("name"));
            return;
        }
        JsonNode body = body(req, resp);
        if (body == null) {
            return;
        }
        String current = text(body, "currentSnapshotId");
        if (current != null) {
            if (snapshots.get(current).filter(x -> x.usable(System.currentTimeMillis())).isEmpty()) {
                resp.error(410, "snapshot_not_found", "Snapshot not found: " + current);
                return;
            }
            sb.currentSnapshotId = current;
            sb.updatedAt = System.currentTimeMillis();
        }
        ObjectNode out = JSON.createObjectNode();
        out.set("sandbox", sb.json());
        out.set("routes", sb.routesJson());
        resp.json(200, out.toString());
    }

    // ---------------------------------------------------------------- snapshots

    /**
     * Takes a snapshot of a running session: its processes stop (the session is
     * {@code snapshotting} meanwhile), its files are copied, and it is stopped; the sandbox's
     * current snapshot becomes it. {@code expiration} (ms, 0 for never) is optional.
     */
    private void snapshotCreate(Request req, Response resp) throws IOException {
        Optional<SessionState> found = session(req, resp, true);
        JsonNode body = found.isPresent() ? body(req, resp) : null;
        if (body == null) {
            return;
        }
        JsonNode exp = body.path("expiration");
        if (!exp.isMissingNode() && !exp.isNull() && (!exp.isIntegralNumber() || exp.asLong() < 0)) {
            resp.error(400, "bad_request", "expiration must be a number of milliseconds, 0 for none, not " + exp);
            return;
        }
        SessionState s = found.get();
        SnapshotStore.Snapshot[] taken = new SnapshotStore.Snapshot[1];
        boolean stopped = s.stop("snapshotting", () -> taken[0] = snapshots.take(s.id, s.owner.name, s.sandbox.root(),
                exp.asLong(0)));
        if (!stopped) {
            resp.error(410, "sandbox_stopped", "the sandbox session " + s.id + " is " + s.status());
            return;
        }
        s.owner.currentSnapshotId = taken[0].id();
        ObjectNode out = JSON.createObjectNode();
        out.set("snapshot", taken[0].json());
        out.set("session", s.json());
        resp.json(200, out.toString());
    }

    private void snapshotGet(Request req, Response resp) throws IOException {
        Optional<SnapshotStore.Snapshot> s = snapshots.get(req.param("id"));
        if (s.isEmpty()) {
            resp.error(404, "not_found", "Snapshot not found: " + req.param("id"));
            return;
        }
        ObjectNode out = JSON.createObjectNode();
        out.set("snapshot", s.get().json());
        resp.json(200, out.toString());
    }

    private void snapshotDelete(Request req, Response resp) throws IOException {
        Optional<SnapshotStore.Snapshot> s = snapshots.delete(req.param("id"));
        if (s.isEmpty()) {
            resp.error(404, "not_found", "Snapshot not found: " + req.param("id"));
            return;
        }
        ObjectNode out = JSON.createObjectNode();
        out.set("snapshot", s.get().json());
        resp.json(200, out.toString());
    }

    // ---------------------------------------------------------------- sessions

    private Optional<SessionState> session(Request req, Response resp, boolean mustRun) throws IOException {
        SessionState s = sessions.get(req.param("sid"));
        if (s == null) {
            resp.error(404, "not_found", "no session " + req.param("sid"));
            return Optional.empty();
        }
        if (mustRun && !s.status().equals("running")) {
            resp.error(410, "sandbox_stopped", "the sandbox session " + s.id + " is " + s.status());
            return Optional.empty();
        }
        return Optional.of(s);
    }

    private void sessionGet(Request req, Response resp) throws IOException {
        Optional<SessionState> s = session(req, resp, false);
        if (s.isPresent()) {
            ObjectNode out = JSON.createObjectNode();
            out.set("session", s.get().json());
            out.set("routes", s.get().owner.routesJson(s.get()));
            resp.json(200, out.toString());
        }
    }

    private void stop(Request req, Response resp) throws IOException {
        Optional<SessionState> s = session(req, resp, false);
        if (s.isEmpty()) {
            return;
        }
        s.get().stop();
        ObjectNode out = JSON.createObjectNode();
        out.set("session", s.get().json());
        out.set("sandbox", s.get().owner.json());
        resp.json(200, out.toString());
    }

    private void extend(Request req, Response resp) throws IOException {
        Optional<SessionState> s = session(req, resp, true);
        JsonNode body = s.isPresent() ? body(req, resp) : null;
        if (body == null) {
            return;
        }
        long d = body.path("duration").asLong(-1);
        if (d <= 0) {
            resp.error(400, "bad_request", "duration (milliseconds, positive) is required");
            return;
        }
        if (s.get().timeout + d > MAX_TIMEOUT_MS) {
            resp.error(400, "bad_request", "the session's timeout would be " + (s.get().timeout + d)
                    + " ms; the maximum is " + MAX_TIMEOUT_MS + " ms (24 hours)");
            return;
        }
        s.get().timeout += d;
        s.get().updatedAt = System.currentTimeMillis();
        ObjectNode out = JSON.createObjectNode();
        out.set("session", s.get().json());
        resp.json(200, out.toString());
    }

    // ---------------------------------------------------------------- commands

    private void cmd(Request req, Response resp) throws IOException {
        Optional<SessionState> so = session(req, resp, true);
        JsonNode body = so.isPresent() ? body(req, resp) : null;
        if (body == null) {
            return;
        }
        SessionState s = so.get();
        String command = text(body, "command");
        if (command == null || command.isEmpty()) {
            resp.error(400, "bad_request", "command is required");
            return;
        }
        List<String> args = new ArrayList<>();
        body.path("args").forEach(a -> args.add(a.asText()));
        List<String> argv = new ArrayList<>();
        argv.add(command);
        argv.addAll(args);
        String cwd = Optional.ofNullable(text(body, "cwd")).orElse(s.cwd);
        Map<String, String> env = new LinkedHashMap<>(s.owner.env);
        env.putAll(strings(body.get("env")));
        if (argv.stream().anyMatch(a -> a.indexOf('\0') >= 0)) {
            resp.error(400, "bad_request", "an argument contains a NUL byte");
            return;
        }
        String id = "cmd_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24);
        SandboxProcess p;
        try {
            // As the sandbox's user; with sudo, as root.
            p = s.sandbox.exec(new EmulatedSandbox.Command("cmd", argv, cwd, env, id, req.bodyBytesRead(), req.fault(),
                    body.path("sudo").asBoolean(false)));
        } catch (NoSuchPathException e) {
            resp.error(400, "bad_request", "the working directory " + cwd + " does not exist");
            return;
        } catch (IllegalStateException e) {
            resp.error(410, "sandbox_stopped", e.getMessage());
            return;
        }
        p.stdin().close();
        CommandState c = new CommandState(id, command, args, cwd, s.id, p, context.stateDir().resolve("logs").resolve(s.id));
        s.commands.put(c.id, c);
        c.start();
        long timeout = body.path("timeout").asLong(0);
        if (timeout > 0) {
            timers.schedule(() -> {
                if (c.exitCode() == null) {
                    p.signal(9);
                }
            }, timeout, TimeUnit.MILLISECONDS);
        }
        if (!body.path("wait").asBoolean(false)) {
            ObjectNode out = JSON.createObjectNode();
            out.set("command", c.json());
            resp.json(200, out.toString());
            return;
        }
        boolean withLogs = body.path("logs").asBoolean(false);
        try (OutputStream o = resp.stream(200, NDJSON)) {
            ObjectNode first = JSON.createObjectNode();
            first.set("command", c.json().putNull("exitCode"));
            line(o, first);
            if (withLogs) {
                streamLogs(c, o);
            }
            c.awaitExit();
            ObjectNode last = JSON.createObjectNode();
            last.set("command", c.json());
            line(o, last);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private Optional<CommandState> command(Request req, Response resp) throws IOException {
        Optional<SessionState> s = session(req, resp, true);
        if (s.isEmpty()) {
            return Optional.empty();
        }
        CommandState c = s.get().commands.get(req.param("cid"));
        if (c == null) {
            resp.error(404, "not_found", "no command " + req.param("cid"));
        }
        return Optional.ofNullable(c);
    }

    private void cmdGet(Request req, Response resp) throws IOException {
        Optional<CommandState> c = command(req, resp);
        if (c.isEmpty()) {
            return;
        }
        if (req.query("wait").map("true"::equals).orElse(false)) {
            try {
                c.get().awaitExit();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
            if (c.get().gone()) {
                resp.error(410, "sandbox_stopped", "the sandbox stopped while the command ran");
                return;
            }
        }
        ObjectNode out = JSON.createObjectNode();
        out.set("command", c.get().json());
        resp.json(200, out.toString());
    }

    private void logs(Request req, Response resp) throws IOException {
        Optional<CommandState> c = command(req, resp);
        if (c.isEmpty()) {
            return;
        }
        try (OutputStream o = resp.stream(200, NDJSON)) {
            streamLogs(c.get(), o);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private static void streamLogs(CommandState c, OutputStream o) throws IOException, InterruptedException {
        for (int i = 0; ; i++) {
            Optional<String[]> l = c.logAt(i);
            if (l.isEmpty()) {
                if (c.gone()) {
                    ObjectNode err = JSON.createObjectNode().put("stream", "error");
                    err.putObject("data").put("code", "sandbox_stopped").put("message", "the sandbox stopped");
                    line(o, err);
                }
                return;
            }
            line(o, JSON.createObjectNode().put("stream", l.get()[0]).put("data", l.get()[1]));
        }
    }

    private void kill(Request req, Response resp) throws IOException {
        Optional<CommandState> c = command(req, resp);
        JsonNode body = c.isPresent() ? body(req, resp) : null;
        if (body == null) {
            return;
        }
        int signal = body.path("signal").asInt(15);
        if (signal != 15 && signal != 9) {
            resp.error(400, "bad_request", "signal must be 15 or 9");
            return;
        }
        // The signal goes to the command's process group, so a background child of a command whose
        // shell already ended (a trapped TERM, say) is still reached by the SIGKILL that follows.
        c.get().process.signal(signal);
        ObjectNode out = JSON.createObjectNode();
        out.set("command", c.get().json());
        resp.json(200, out.toString());
    }

    // ---------------------------------------------------------------- files

    private void fsWrite(Request req, Response resp) throws IOException {
        Optional<SessionState> so = session(req, resp, true);
        if (so.isEmpty()) {
            return;
        }
        String cwd = req.header("x-cwd").orElse("/");
        if (!cwd.startsWith("/")) {
            resp.error(400, "bad_request", "x-cwd must be an absolute path");
            return;
        }
        if (!req.header("Content-Type").map(t -> t.startsWith("application/gzip")).orElse(false)) {
            resp.error(400, "bad_request", "the body must be a gzipped tar (Content-Type: application/gzip)");
            return;
        }
        EmulatedSandbox sb = so.get().sandbox;
        try {
            TarEntries tar = new TarEntries(new GZIPInputStream(req.body(), 65536));
            for (Optional<TarEntries.Entry> e = tar.next(); e.isPresent(); e = tar.next()) {
                TarEntries.Entry en = e.get();
                String path = join(cwd, en.name());
                if (en.directory()) {
                    sb.mkdirs(path, en.mode() == 0 ? 0755 : en.mode());
                } else if (en.file()) {
                    int mode = en.mode() == 0 ? 0644 : en.mode();
                    sb.write(path, en.data(), mode);
                    int actual = sb.stat(path).map(a -> bits(a)).orElse(-1);
                    writes.add(new StagedWrite(so.get().id, path, en.mode(), actual, en.size()));
                }
            }
        } catch (java.util.zip.ZipException | java.io.EOFException | TarEntries.Malformed e) {
            resp.error(400, "bad_request", "the body is not a complete gzipped tar: " + e.getMessage());
            return;
        } catch (java.nio.file.AccessDeniedException e) {
            resp.error(403, "forbidden", "cannot write " + e.getFile() + ": read-only file system");
            return;
        }
        resp.json(200, "{}");
    }

    private void fsRead(Request req, Response resp) throws IOException {
        Optional<SessionState> so = session(req, resp, true);
        JsonNode body = so.isPresent() ? body(req, resp) : null;
        if (body == null) {
            return;
        }
        String path = join(Optional.ofNullable(text(body, "cwd")).orElse(so.get().cwd), Optional.ofNullable(text(body, "path")).orElse(""));
        InputStream in;
        try {
            in = so.get().sandbox.read(path);
        } catch (NoSuchFileException | IllegalArgumentException | NoSuchPathException e) {
            resp.error(404, "file_not_found", "no file " + path);
            return;
        }
        try (in; OutputStream o = resp.stream(200, "application/octet-stream")) {
            in.transferTo(o);
        }
    }

    private void fsMkdir(Request req, Response resp) throws IOException {
        Optional<SessionState> so = session(req, resp, true);
        JsonNode body = so.isPresent() ? body(req, resp) : null;
        if (body == null) {
            return;
        }
        String path = join(Optional.ofNullable(text(body, "cwd")).orElse(so.get().cwd), Optional.ofNullable(text(body, "path")).orElse(""));
        EmulatedSandbox sb = so.get().sandbox;
        String parent = path.substring(0, Math.max(1, path.lastIndexOf('/')));
        if (sb.stat(parent).map(a -> !a.isDirectory()).orElse(true)) {
            resp.error(404, "file_not_found", "the parent of " + path + " does not exist (mkdir is not recursive)");
            return;
        }
        if (sb.stat(path).isPresent()) {
            resp.error(409, "file_exists", path + " already exists");
            return;
        }
        sb.mkdirs(path, 0755);
        resp.json(200, "{}");
    }

    // ---------------------------------------------------------------- helpers

    private static JsonNode body(Request req, Response resp) throws IOException {
        byte[] b = req.bodyBytes(1 << 20);
        if (b.length == 0) {
            return JSON.createObjectNode();
        }
        try {
            JsonNode n = JSON.readTree(b);
            if (n == null || !n.isObject()) {
                resp.error(400, "bad_request", "the body must be a JSON object");
                return null;
            }
            return n;
        } catch (IOException e) {
            resp.error(400, "bad_request", "the body is not JSON: " + e.getMessage());
            return null;
        }
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    /** An array's texts; anything else is none. */
    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        if (array.isArray()) {
            array.forEach(v -> out.add(v.asText()));
        }
        return List.copyOf(out);
    }

    private static Map<String, String> strings(JsonNode n) {
        Map<String, String> m = new LinkedHashMap<>();
        if (n != null && n.isObject()) {
            n.properties().forEach(e -> m.put(e.getKey(), e.getValue().asText()));
        }
        return m;
    }

    private static String join(String cwd, String path) {
        if (path.startsWith("/")) {
            return path;
        }
        return (cwd.endsWith("/") ? cwd : cwd + "/") + path;
    }

    private static int bits(PosixFileAttributes a) {
        int m = 0;
        for (PosixFilePermission p : a.permissions()) {
            m |= 1 << (8 - p.ordinal());
        }
        return m;
    }

    private static void line(OutputStream o, JsonNode n) throws IOException {
        o.write((n.toString() + "\n").getBytes(StandardCharsets.UTF_8));
        o.flush();
    }
}
