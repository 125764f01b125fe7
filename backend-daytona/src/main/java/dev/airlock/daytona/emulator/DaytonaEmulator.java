package dev.airlock.daytona.emulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.airlock.emulator.CallJournal;
import dev.airlock.emulator.EmulatedSandbox;
import dev.airlock.emulator.Emulator;
import dev.airlock.emulator.EmulatorContext;
import dev.airlock.emulator.EmulatorCredentials;
import dev.airlock.emulator.EmulatorHttpServer;
import dev.airlock.emulator.RateLimits;
import dev.airlock.emulator.EmulatorHttpServer.Request;
import dev.airlock.emulator.EmulatorHttpServer.Response;
import dev.airlock.emulator.ImageCatalogue;
import dev.airlock.emulator.SandboxProcess;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Daytona's control API and its toolbox (daemon) API on loopback, close enough that Daytona's
 * official TS SDK works against it unchanged. {@link #url()} is the API base
 * ({@code http://HOST:PORT/api}); each sandbox's {@code toolboxProxyUrl} is
 * {@code http://HOST:PORT/toolbox}, so its toolbox base is {@code .../toolbox/{id}}.
 *
 * <p>What it keeps of the real service: the JSON shapes and error bodies
 * ({@code {statusCode, error, message, path, timestamp}}, toolbox errors add {@code code}),
 * {@code Retry-After-<bucket>} on 429, 408 on an execute timeout, the daemon's habit of piping
 * the command string into a shell's stdin (so leftover stdin would run), sessions that are one
 * long-lived shell each (state carries from command to command, a running command takes input:
 * {@link SessionShell}), logs that are not
 * byte-exact (NUL dropped, invalid UTF-8 replaced), files created 0644, octal modes, the
 * bulk-upload rule that a path part comes before its file part, bulk-download answered as
 * multipart, and socket.io answered 404 so the SDK falls back to polling.
 */
public final class DaytonaEmulator implements Emulator {
    /** Snapshot name that makes a create end in {@code build_failed}, for tests of that path. */
    public static final String FAILING_SNAPSHOT = "airlock-emulator/build-fails";
    /** Snapshot name whose sandbox is {@code creating} in the create's answer, then {@code error} when polled. */
    public static final String ERROR_SNAPSHOT = "airlock-emulator/start-errors";
    private static final String HOME = "/home/daytona";
    /** The sandbox's default user, as on the service's images: commands and the daemon's files are its. */
    private static final EmulatedSandbox.User USER = new EmulatedSandbox.User("daytona", 1000, HOME);
    private static final int JSON_MAX = 1 << 20;
    /** The most bytes a bulk upload's {@code files[i].path} part may hold (it is read whole). */
    private static final int MAX_PATH_PART = 64 * 1024;

    /**
     * The organization's per-sandbox maximums of the service's default tier: 4 vCPUs, 8 GB of
     * memory, 10 GB of disk. A create over one is refused 403 {@code Forbidden} with the
     * service's own message ({@code CPU request 512 exceeds maximum allowed per sandbox (4)}).
     */
    public static final int MAX_CPU_PER_SANDBOX = 4;
    public static final int MAX_MEMORY_GB_PER_SANDBOX = 8;
    public static final int MAX_DISK_GB_PER_SANDBOX = 10;

    /** The service's variable for the API key this emulator accepts (from its environment, else made at start). */
    public static final String API_KEY_VARIABLE = "DAYTONA_API_KEY";

    private final EmulatorContext context;
    private final EmulatorCredentials credentials;
    private final EmulatorHttpServer server;
    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, Box> boxes = new ConcurrentHashMap<>();
    /** Modes of every file a client chmod-ed, in order: the tests read that staged files were 0600. */
    private final List<String> chmods = Collections.synchronizedList(new ArrayList<>());
    private final PreviewLinks previews = new PreviewLinks();
    /** For tests: a snapshot's copy waits for this to open, so a sandbox stays {@code snapshotting} meanwhile. */
    private volatile java.util.concurrent.CountDownLatch snapshotGate = new java.util.concurrent.CountDownLatch(0);
    private final SnapshotStore snapshots;
    /** For tests: told the path of each toolbox call refused because its sandbox is not started, before the refusal goes out. */
    private volatile java.util.function.Consumer<String> beforeToolboxRefusal = path -> { };

    /** One sandbox: the record the API shows, the emulated machine, its sessions. */
    private static final class Box {
        final String id;
        final ObjectNode record;
        final EmulatedSandbox sandbox;
        final Map<String, SessionShell> sessions = new ConcurrentHashMap<>();
        volatile String state;

        Box(String id, ObjectNode record, EmulatedSandbox sandbox, String state) {
            this.id = id;
            this.record = record;
            this.sandbox = sandbox;
            this.state = state;
        }
    }

    public DaytonaEmulator(EmulatorContext context) throws IOException {
        this.context = context;
        this.credentials = EmulatorCredentials.from(context.environment()).variable(API_KEY_VARIABLE, "dtn_").build();
        this.snapshots = new SnapshotStore(context.stateDir().resolve("snapshots"));
        String t = "/toolbox/{sandbox}";
        this.server = EmulatorHttpServer.builder()
                .auth(this::authenticate)
                .faults(context.faults())
                .journal(context.journal())
                .errors((status, code, message) -> error(status, code, message, "").toString())
                .retryAfterHeader(call -> "Retry-After-" + bucket(call))
                .rateLimits(RateLimits.of(RATE_LIMITS, DaytonaEmulator::bucket, context.settings(), RATE_LIMIT_PREFIX))
                .openRoute("GET", "/api/socket.io/", "socket-io", (q, r) -> r.error(404, "NOT_FOUND", "Cannot GET /api/socket.io/"))
                .route("POST", "/api/sandbox", "sandbox-create", this::create)
                .route("GET", "/api/sandbox", "sandbox-list", this::list)
                .route("GET", "/api/sandbox/{id}", "sandbox-get", this::get)
                .route("POST", "/api/sandbox/{id}/stop", "sandbox-stop", this::stop)
                .route("DELETE", "/api/sandbox/{id}", "sandbox-delete", this::delete)
                .route("GET", "/api/sandbox/{id}/toolbox-proxy-url", "sandbox-toolbox-url", this::toolboxUrl)
                .route("GET", "/api/sandbox/{id}/ports/{port}/preview-url", "preview-url", this::previewUrl)
                .route("GET", "/api/sandbox/{id}/ports/{port}/signed-preview-url", "signed-preview-url", this::signedPreviewUrl)
                .route("POST", "/api/sandbox/{id}/ports/{port}/signed-preview-url/{token}/expire", "signed-preview-url-expire",
                        this::expireSignedPreviewUrl)
                .route("POST", "/api/sandbox/{id}/snapshot", "sandbox-snapshot", this::snapshot)
                .route("GET", "/api/snapshots", "snapshot-list", this::snapshotList)
                .route("GET", "/api/snapshots/{snapshot}", "snapshot-get", this::snapshotGet)
                .route("DELETE", "/api/snapshots/{snapshot}", "snapshot-delete", this::snapshotDelete)
                .route("POST", t + "/process/execute", "process-execute", this::execute)
                .route("POST", t + "/process/session", "session-create", this::sessionCreate)
                .route("GET", t + "/process/session", "session-list", this::sessionList)
                .route("GET", t + "/process/session/{session}", "session-get", this::sessionGet)
                .route("DELETE", t + "/process/session/{session}", "session-delete", this::sessionDelete)
                .route("POST", t + "/process/session/{session}/exec", "session-exec", this::sessionExec)
                .route("GET", t + "/process/session/{session}/command/{cmd}", "command-get", this::commandGet)
                .route("GET", t + "/process/session/{session}/command/{cmd}/logs", "command-logs", this::commandLogs)
                .route("POST", t + "/process/session/{session}/command/{cmd}/input", "command-input", this::commandInput)
                .route("POST", t + "/files/bulk-upload", "files-bulk-upload", this::bulkUpload)
                .route("POST", t + "/files/upload-v2", "files-upload", this::uploadV2)
                .route("POST", t + "/files/bulk-download", "files-bulk-download", this::bulkDownload)
                .route("GET", t + "/files/download", "files-download", this::download)
                .route("POST", t + "/files/folder", "files-folder", this::folder)
                .route("POST", t + "/files/permissions", "files-permissions", this::permissions)
                .route("GET", t + "/files/info", "files-info", this::info)
                .route("DELETE", t + "/files", "files-delete", this::deleteFile)
                .start(context.listen());
    }

    /** The API base a client is configured with: {@code DAYTONA_API_URL}. */
    @Override
    public URI url() {
        return URI.create(server.url() + "/api");
    }

    public CallJournal journal() {
        return context.journal();
    }

    /** Every {@code path mode} a client set through the permissions endpoint, in order. */
    public List<String> chmods() {
        synchronized (chmods) {
            return List.copyOf(chmods);
        }
    }

    /** A sandbox's state as the API shows it, empty once deleted (for tests). */
    public Optional<String> sandboxState(String sandboxId) {
        return Optional.ofNullable(boxes.get(sandboxId)).map(b -> b.state);
    }

    /** Whether the create of this sandbox asked for {@code networkBlockAll}. */
    public boolean networkBlocked(String sandboxId) {
        return boxes.get(sandboxId).record.path("networkBlockAll").asBoolean(false);
    }

    /** What the create of this sandbox asked for {@code networkAllowList} and {@code domainAllowList} (empty: not sent). */
    public List<String> allowLists(String sandboxId) {
        JsonNode r = boxes.get(sandboxId).record;
        return List.of(r.path("networkAllowList").asText(""), r.path("domainAllowList").asText(""));
    }

    /** Ids of the sandboxes that exist (not yet deleted). */
    public List<String> sandboxIds() {
        return List.copyOf(boxes.keySet());
    }

    /** Live processes of every sandbox: none after all were stopped or deleted. */
    public int liveProcesses() {
        return boxes.values().stream().mapToInt(b -> b.sandbox.livePids().size()).sum();
    }

    /** A sandbox's file as it is on its disk, for tests. */
    public Optional<PosixFileAttributes> stat(String sandboxId, String path) {
        Box b = boxes.get(sandboxId);
        return b == null ? Optional.empty() : b.sandbox.stat(path);
    }

    /** The files under a sandbox dir whose names start with {@code prefix}: staged leftovers in tests. */
    public List<String> find(String sandboxId, String dir, String prefix) throws IOException {
        Box b = boxes.get(sandboxId);
        List<String> out = new ArrayList<>();
        if (b == null) {
            return out;
        }
        java.nio.file.Path d = b.sandbox.resolve(dir).host();
        if (!java.nio.file.Files.isDirectory(d)) {
            return out;
        }
        try (var s = java.nio.file.Files.walk(d)) {
            s.filter(p -> p.getFileName().toString().startsWith(prefix)).forEach(p -> out.add(p.toString()));
        }
        return out;
    }

    @Override
    public void close() {
        server.close();
        previews.closeAll();
        boxes.values().forEach(b -> b.sandbox.close());
        boxes.clear();
    }

    /**
     * Daytona's documented rate limits per bucket (requests per 60 s): sandbox creation 600,
     * lifecycle (start, stop, delete, archive) 50,000, other authenticated calls 50,000.
     * {@code airlock.daytona.emulator.rate-limit.BUCKET=N/SECONDS} replaces one.
     */
    static final Map<String, RateLimits.Limit> RATE_LIMITS = Map.of(
            "sandbox-create", new RateLimits.Limit(600, java.time.Duration.ofSeconds(60)),
            "sandbox-lifecycle", new RateLimits.Limit(50_000, java.time.Duration.ofSeconds(60)),
            "authenticated", new RateLimits.Limit(50_000, java.time.Duration.ofSeconds(60)));
    public static final String RATE_LIMIT_PREFIX = "airlock.daytona.emulator.rate-limit";

    private static String bucket(String call) {
        return switch (call) {
            case "sandbox-create" -> "sandbox-create";
            case "sandbox-stop", "sandbox-delete" -> "sandbox-lifecycle";
            default -> "authenticated";
        };
    }

    // ------------------------------------------------------------------ control API

    private void create(Request req, Response resp) throws IOException {
        JsonNode body = readJson(req);
        if (body == null || !body.isObject()) {
            fail(req, resp, 400, "BAD_REQUEST", "the body must be a JSON object");
            return;
        }
        boolean build = body.hasNonNull("buildInfo");
        for (String k : List.of("cpu", "memory", "disk")) {
            if (body.hasNonNull(k) && !build) {
                fail(req, resp, 400, "BAD_REQUEST", "Cannot specify Sandbox resources when using a snapshot");
                return;
            }
        }
        String over = overQuota(body);
        if (over != null) {
            fail(req, resp, 403, null, over);
            return;
        }
        String image = build ? body.path("buildInfo").path("dockerfileContent").asText("").replaceFirst("^FROM\\s+", "").trim()
                : body.path("snapshot").asText("daytonaio/sandbox:latest");
        Optional<SnapshotStore.Snap> taken = build ? Optional.empty() : snapshots.find(image).filter(x -> x.state.equals("active"));
        boolean known = taken.isPresent() || ImageCatalogue.lookup(image).isPresent() || image.equals(FAILING_SNAPSHOT)
                || image.equals(ERROR_SNAPSHOT);
        if (!build && !known) { // the service's answer for a snapshot name it has not got
            fail(req, resp, 400, "BAD_REQUEST", "Snapshot " + image + " not found. Did you add it through the Daytona Dashboard?");
            return;
        }
        String id = UUID.randomUUID().toString();
        EmulatedSandbox sb = EmulatedSandbox.create(id, taken.map(x -> x.image).orElse(image),
                context.stateDir().resolve(id), USER, context.isolation(), context.journal());
        if (taken.isPresent()) {
            SnapshotStore.restore(taken.get(), sb.root()); // the files as they were when the snapshot was taken
        }
        ObjectNode r = json.createObjectNode();
        r.put("id", id);
        r.put("name", body.path("name").asText(id));
        r.put("organizationId", "emulated-org");
        r.put("snapshot", build ? null : image);
        r.put("user", "daytona");
        r.set("env", body.path("env").isObject() ? body.get("env") : json.createObjectNode());
        r.set("labels", body.path("labels").isObject() ? body.get("labels") : json.createObjectNode());
        r.put("public", body.path("public").asBoolean(false));
        r.put("target", body.path("target").asText("us"));
        r.put("cpu", body.path("cpu").asInt(1));
        r.put("gpu", 0);
        r.put("memory", body.path("memory").asInt(1));
        r.put("disk", body.path("disk").asInt(3));
        // Emulated commands always run in a network namespace of their own (no route out): what
        // networkBlockAll promises; the record says what the create asked, as the service's does.
        r.put("networkBlockAll", body.path("networkBlockAll").asBoolean(false));
        // The allowlists as the create sent them; an allowlisted sandbox reaches nothing here either
        // (stricter than the service, never kinder).
        if (body.hasNonNull("networkAllowList")) {
            r.put("networkAllowList", body.get("networkAllowList").asText());
        }
        if (body.hasNonNull("domainAllowList")) {
            r.put("domainAllowList", body.get("domainAllowList").asText());
        }
        r.put("autoStopInterval", body.path("autoStopInterval").asInt(15));
        r.put("autoArchiveInterval", body.path("autoArchiveInterval").asInt(10080));
        r.put("autoDeleteInterval", body.path("autoDeleteInterval").asInt(-1));
        r.put("createdAt", Instant.now().toString());
        r.put("updatedAt", Instant.now().toString());
        r.put("toolboxProxyUrl", server.url() + "/toolbox");
        r.put("backupState", "None");
        r.set("volumes", json.createArrayNode());
        // An image the emulator cannot have fails its build, as a pull of an image no registry has.
        boolean fails = FAILING_SNAPSHOT.equals(image) || !known;
        Box box = new Box(id, r, sb, fails ? "build_failed" : "creating");
        if (fails) {
            r.put("errorReason", known ? "emulated build failure of " + image
                    : "emulated build failure: the image " + image + " is not in this emulator's catalogue (" + String.join(", ",
                    ImageCatalogue.KNOWN) + ")");
        }
        boxes.put(id, box);
        String first = describe(box); // the create answer shows the real first state; the next poll sees it started
        if (ERROR_SNAPSHOT.equals(image)) {
            r.put("errorReason", "emulated start failure of " + image);
            box.state = "error";
        } else if (!fails) {
            box.state = "started";
        }
        resp.json(200, first);
    }

    private void list(Request req, Response resp) throws IOException {
        Map<String, String> want = new LinkedHashMap<>();
        Optional<String> labels = req.query("labels");
        if (labels.isPresent() && !labels.get().isBlank()) {
            JsonNode l = json.readTree(labels.get());
            l.fields().forEachRemaining(e -> want.put(e.getKey(), e.getValue().asText()));
        }
        ArrayNode out = json.createArrayNode();
        for (Box b : boxes.values()) {
            JsonNode have = b.record.path("labels");
            if (want.entrySet().stream().allMatch(e -> e.getValue().equals(have.path(e.getKey()).asText(null)))) {
                out.add(json.readTree(describe(b)));
            }
        }
        resp.json(200, out.toString());
    }

    private void get(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "id", false);
        if (b != null) {
            resp.json(200, describe(b));
        }
    }

    private void stop(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "id", false);
        if (b == null) {
            return;
        }
        synchronized (b) {
            if (!b.state.equals("started")) {
                fail(req, resp, 400, "BAD_REQUEST", "Sandbox is not started");
                return;
            }
            b.state = "stopping";
            previews.close(b.id);
            b.sessions.clear();
            b.sandbox.stop();
            b.state = "stopped";
        }
        resp.json(200, describe(b));
    }

    private void delete(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "id", false);
        if (b == null) {
            return;
        }
        synchronized (b) {
            if (boxes.remove(b.id) == null) {
                fail(req, resp, 404, "NOT_FOUND", "Sandbox with ID or name " + b.id + " not found");
                return;
            }
            b.state = "destroying";
            previews.close(b.id);
            b.sandbox.close();
        }
        resp.json(200, describe(b));
    }

    private void toolboxUrl(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "id", false);
        if (b != null) {
            resp.json(200, "{\"url\":" + json.writeValueAsString(server.url() + "/toolbox") + "}");
        }
    }

    // ------------------------------------------------------------------ preview links

    /** {@code GET /sandbox/{id}/ports/{port}/preview-url}: the standard URL and the token its proxy wants in a header. */
    private void previewUrl(Request req, Response resp) throws IOException {
        Box b = startedBox(req, resp);
        Integer port = b == null ? null : port(req, resp);
        if (port != null) {
            resp.json(200, previews.standard(b.id, b.sandbox, port, () -> b.record.path("public").asBoolean(false)).toString());
        }
    }

    /** {@code GET .../signed-preview-url?expiresInSeconds=N} (60 by default, as the service's): a URL that needs no header. */
    private void signedPreviewUrl(Request req, Response resp) throws IOException {
        Box b = startedBox(req, resp);
        Integer port = b == null ? null : port(req, resp);
        if (port == null) {
            return;
        }
        long seconds;
        try {
            seconds = Long.parseLong(req.query("expiresInSeconds").orElse("60"));
        } catch (NumberFormatException e) {
            seconds = -1;
        }
        if (seconds < 1) {
            fail(req, resp, 400, "BAD_REQUEST", "expiresInSeconds must be a positive integer");
            return;
        }
        resp.json(200, previews.signed(b.id, b.sandbox, port, java.time.Duration.ofSeconds(seconds)).toString());
    }

    private void expireSignedPreviewUrl(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "id", false);
        Integer port = b == null ? null : port(req, resp);
        if (port == null) {
            return;
        }
        if (!previews.expire(b.id, port, req.param("token"))) {
            fail(req, resp, 404, "NOT_FOUND", "Signed preview URL token not found");
            return;
        }
        resp.json(200, "{}");
    }

    private Box startedBox(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "id", false);
        if (b != null && !b.state.equals("started")) {
            fail(req, resp, 400, "BAD_REQUEST", "Sandbox is not started");
            return null;
        }
        return b;
    }

    /** The path's port, 1-65535; else 400 as the service's validation answers. */
    private Integer port(Request req, Response resp) throws IOException {
        try {
            int p = Integer.parseInt(req.param("port"));
            if (p >= 1 && p <= 65535) {
                return p;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        fail(req, resp, 400, "BAD_REQUEST", "Invalid port: " + req.param("port") + " (1-65535)");
        return null;
    }

    // ------------------------------------------------------------------ snapshots

    /**
     * {@code POST /sandbox/{id}/snapshot {name}}: a started (container) sandbox goes
     * {@code snapshotting} while its filesystem is copied, then back to {@code started}; the
     * snapshot is {@code active} once the copy is whole.
     */
    private void snapshot(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "id", false);
        if (b == null) {
            return;
        }
        JsonNode body = readJson(req);
        String name = body == null ? "" : body.path("name").asText("").trim();
        if (name.isEmpty()) {
            fail(req, resp, 400, "BAD_REQUEST", "name must be a non-empty string");
            return;
        }
        SnapshotStore.Snap snap;
        synchronized (b) {
            if (!b.state.equals("started")) {
                fail(req, resp, 400, "BAD_REQUEST", "Sandbox must be started to create a snapshot (state " + b.state + ")");
                return;
            }
            Optional<SnapshotStore.Snap> s = snapshots.begin(name, b.id, b.sandbox.image());
            if (s.isEmpty()) {
                fail(req, resp, 409, "CONFLICT", "Snapshot with name " + name + " already exists");
                return;
            }
            snap = s.get();
            b.state = "snapshotting";
        }
        String answer = describe(b);
        java.util.concurrent.CountDownLatch gate = snapshotGate;
        Thread t = new Thread(() -> {
            try {
                gate.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            snapshots.copy(snap, b.sandbox.root());
            synchronized (b) {
                if (b.state.equals("snapshotting")) {
                    b.state = "started";
                }
            }
        }, "daytona-emulator-snapshot-" + b.id);
        t.setDaemon(true);
        t.start();
        resp.json(200, answer);
    }

    /** {@code GET /snapshots?name=&page=&limit=}: a partial name match, a page at a time ({@code {items, total, page, totalPages}}). */
    private void snapshotList(Request req, Response resp) throws IOException {
        int page;
        int limit;
        try {
            page = Integer.parseInt(req.query("page").orElse("1"));
            limit = Integer.parseInt(req.query("limit").orElse("100"));
        } catch (NumberFormatException e) {
            page = 0;
            limit = 0;
        }
        if (page < 1 || limit < 1 || limit > 200) {
            fail(req, resp, 400, "BAD_REQUEST", "page must be >= 1 and limit 1-200");
            return;
        }
        List<SnapshotStore.Snap> all = snapshots.matching(req.query("name").orElse(""));
        ArrayNode items = json.createArrayNode();
        all.stream().skip((long) (page - 1) * limit).limit(limit).forEach(s -> items.add(snapshots.describe(s)));
        ObjectNode out = json.createObjectNode();
        out.set("items", items);
        out.put("total", all.size());
        out.put("page", page);
        out.put("totalPages", Math.max(1, (all.size() + limit - 1) / limit));
        resp.json(200, out.toString());
    }

    private void snapshotGet(Request req, Response resp) throws IOException {
        Optional<SnapshotStore.Snap> s = snapshots.find(req.param("snapshot"));
        if (s.isEmpty()) {
            fail(req, resp, 404, "NOT_FOUND", "Snapshot " + req.param("snapshot") + " not found");
            return;
        }
        resp.json(200, snapshots.describe(s.get()).toString());
    }

    private void snapshotDelete(Request req, Response resp) throws IOException {
        if (!snapshots.delete(req.param("snapshot"))) {
            fail(req, resp, 404, "NOT_FOUND", "Snapshot with ID " + req.param("snapshot") + " not found");
            return;
        }
        resp.json(200, "{}");
    }

    /** For tests: snapshots taken from now on stay {@code snapshotting} until {@code gate} opens (60 s at most). */
    public void holdSnapshots(java.util.concurrent.CountDownLatch gate) {
        this.snapshotGate = gate;
    }

    /** For tests: {@code hook} is told the path of each toolbox call refused because its sandbox is not started, before the refusal. */
    public void beforeToolboxRefusal(java.util.function.Consumer<String> hook) {
        this.beforeToolboxRefusal = hook;
    }

    /** Whether the emulator holds a snapshot of that id or name (for tests). */
    public boolean hasSnapshot(String idOrName) {
        return snapshots.find(idOrName).isPresent();
    }

    private String describe(Box b) {
        ObjectNode r = b.record.deepCopy();
        r.put("state", b.state);
        r.put("desiredState", b.state.equals("destroying") ? "destroyed" : b.state.startsWith("stop") ? "stopped" : "started");
        return r.toString();
    }

    // ------------------------------------------------------------------ toolbox: exec

    /**
     * {@code /process/execute}: like the newer daemons, the command string goes into a shell's
     * stdin, so whatever the command leaves unread on that stdin runs as shell code. Output is
     * stdout then stderr, as text (not byte-exact).
     */
    private void execute(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        JsonNode body = b == null ? null : readJson(req);
        if (b == null) {
            return;
        }
        if (body == null || !body.hasNonNull("command")) {
            fail(req, resp, 400, "BAD_REQUEST", "command is required");
            return;
        }
        String command = body.get("command").asText();
        Map<String, String> env = envs(body.path("envs"));
        String cwd = body.hasNonNull("cwd") && !body.get("cwd").asText().isEmpty() ? body.get("cwd").asText() : HOME;
        int timeout = body.path("timeout").asInt(0);
        SandboxProcess p = startShell(b, req, "process-execute", command, cwd, env, UUID.randomUUID().toString());
        if (p == null) {
            resp.json(200, "{\"exitCode\":-1,\"result\":\"failed to start the command\"}");
            return;
        }
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p.stderr()));
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> readAll(p.stdout()));
        int code;
        try {
            if (timeout > 0 && !p.waitFor(timeout, TimeUnit.SECONDS)) {
                p.signal(9);
                failToolbox(req, resp, 408, "PROCESS_EXECUTION_TIMEOUT", "command execution timeout");
                return;
            }
            code = p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        String result = logText(out.join()) + logText(err.join());
        ObjectNode r = json.createObjectNode();
        r.put("exitCode", code);
        r.put("result", result);
        resp.json(200, r.toString());
    }

    private void sessionCreate(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        JsonNode body = b == null ? null : readJson(req);
        if (b == null) {
            return;
        }
        String sid = body == null ? "" : body.path("sessionId").asText("");
        if (sid.isEmpty()) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "sessionId is required");
            return;
        }
        if (b.sessions.containsKey(sid)) {
            failToolbox(req, resp, 409, "SESSION_EXISTS", "session already exists");
            return;
        }
        SandboxProcess shell;
        try {
            // The daemon's session: one shell of its own group, reading commands on its stdin.
            shell = b.sandbox.exec(new EmulatedSandbox.Command("session-create", List.of("sh"), HOME, Map.of(),
                    UUID.randomUUID().toString(), req.bodyBytesRead(), req.fault()));
        } catch (IllegalStateException e) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "failed to start the session's shell");
            return;
        }
        if (b.sessions.putIfAbsent(sid, SessionShell.start(sid, b.sandbox, shell)) != null) {
            shell.signal(9);
            failToolbox(req, resp, 409, "SESSION_EXISTS", "session already exists");
            return;
        }
        resp.empty(201);
    }

    private void sessionList(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        if (b == null) {
            return;
        }
        ArrayNode out = json.createArrayNode();
        for (SessionShell s : b.sessions.values()) {
            out.add(sessionJson(s));
        }
        resp.json(200, out.toString());
    }

    private void sessionGet(Request req, Response resp) throws IOException {
        SessionShell s = session(req, resp);
        if (s != null) {
            resp.json(200, sessionJson(s).toString());
        }
    }

    /** Deleting a session kills its shell's process group, the shell and its commands (SIGTERM, then SIGKILL). */
    private void sessionDelete(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        if (b == null) {
            return;
        }
        SessionShell s = b.sessions.remove(req.param("session"));
        if (s == null) {
            failToolbox(req, resp, 404, "SESSION_NOT_FOUND", "session not found");
            return;
        }
        SandboxProcess shell = s.shell();
        shell.signal(15);
        try {
            shell.waitFor(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        // The daemon's SIGKILL goes to the whole group: a child that ignored SIGTERM (or whose
        // leader already left) is killed too.
        shell.signal(9);
        // Answer once the group is gone, as the daemon does: a client that deleted a session to
        // kill its command may look for survivors right away.
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (groupAlive(b, shell.pgid()) && System.nanoTime() < until) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
        s.removeFiles();
        resp.empty(204);
    }

    /**
     * Hands the command to the session's shell, after the commands before it: the journal's
     * dispatch key is the session and the text, so the same text sent twice to one session is the
     * same command run twice.
     */
    private void sessionExec(Request req, Response resp) throws IOException {
        SessionShell s = session(req, resp);
        JsonNode body = s == null ? null : readJson(req);
        if (s == null) {
            return;
        }
        if (body == null || !body.hasNonNull("command")) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "command is required");
            return;
        }
        String command = body.get("command").asText();
        String key = UUID.nameUUIDFromBytes((s.id + "\n" + command).getBytes(StandardCharsets.UTF_8)).toString();
        context.journal().dispatch("session-exec", req.param("sandbox"), command, List.of(command), List.of(),
                req.bodyBytesRead(), key, req.fault());
        SessionShell.Command c;
        try {
            c = s.submit(command, !body.path("suppressInputEcho").asBoolean(false));
        } catch (IOException e) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "failed to write command: " + e.getMessage());
            return;
        }
        boolean async = body.path("runAsync").asBoolean(false) || body.path("async").asBoolean(false);
        if (async) {
            resp.json(202, "{\"cmdId\":" + json.writeValueAsString(c.id) + "}");
            return;
        }
        int code = c.exit.join();
        ObjectNode r = logs(s, c);
        r.put("cmdId", c.id);
        r.put("exitCode", code);
        resp.json(200, r.toString());
    }

    private void commandGet(Request req, Response resp) throws IOException {
        SessionShell.Command c = command(req, resp);
        if (c != null) {
            resp.json(200, cmdJson(c).toString());
        }
    }

    private void commandLogs(Request req, Response resp) throws IOException {
        SessionShell s = session(req, resp);
        SessionShell.Command c = s == null ? null : command(req, resp);
        if (c != null) {
            resp.json(200, logs(s, c).toString());
        }
    }

    /** The daemon's answer to input: 410 once the command ended, else the data on the command's stdin. */
    private void commandInput(Request req, Response resp) throws IOException {
        SessionShell s = session(req, resp);
        SessionShell.Command c = s == null ? null : command(req, resp);
        JsonNode body = c == null ? null : readJson(req);
        if (c == null) {
            return;
        }
        if (body == null || !body.path("data").isTextual()) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "data is required");
            return;
        }
        if (c.exit.isDone()) {
            failToolbox(req, resp, 410, "GONE", "command has already completed with exit code " + c.exit.join());
            return;
        }
        try {
            s.input(c, body.get("data").asText());
        } catch (java.nio.file.NoSuchFileException e) {
            failToolbox(req, resp, 500, "INTERNAL_SERVER_ERROR", "failed to open input pipe: no such file or directory");
            return;
        }
        resp.empty(200);
    }

    private ObjectNode logs(SessionShell s, SessionShell.Command c) throws IOException {
        String so = logText(s.stdout(c));
        String se = logText(s.stderr(c));
        ObjectNode r = json.createObjectNode();
        r.put("output", so + se);
        r.put("stdout", so);
        r.put("stderr", se);
        return r;
    }

    /**
     * Starts {@code sh} with {@code command} on its stdin, as the daemon does: the shell reads
     * the command text, and after it whatever the command did not read from that same stdin.
     */
    private SandboxProcess startShell(Box b, Request req, String call, String command, String cwd, Map<String, String> env,
                                      String key) throws IOException {
        SandboxProcess p;
        try {
            // "exec sh -s" reads its script from stdin; the command text rides as $0 only so the journal records it.
            p = b.sandbox.exec(new EmulatedSandbox.Command(call, List.of("sh", "-c", "exec sh -s", command), cwd, env, key,
                    req.bodyBytesRead(), req.fault()));
        } catch (IllegalStateException | dev.airlock.NoSuchPathException e) {
            return null;
        }
        // The text then end-of-input, and nothing after it: a command that moved the shell's stdin
        // (`exec 0< f`) leaves the shell reading f's unread tail as commands, as on the real daemon.
        byte[] text = (command + "\n").getBytes(StandardCharsets.UTF_8);
        CompletableFuture.runAsync(() -> {
            try (OutputStream in = p.stdin()) {
                in.write(text);
            } catch (IOException ignored) {
                // the shell ended before reading all of it
            }
        });
        return p;
    }

    /** Whether a live process of the sandbox is still in process group {@code pgid} (zombies do not count). */
    private static boolean groupAlive(Box b, long pgid) {
        for (long pid : b.sandbox.livePids()) {
            try {
                String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc", Long.toString(pid), "stat"));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                if (!f[0].equals("Z") && Long.parseLong(f[2]) == pgid) {
                    return true;
                }
            } catch (IOException | RuntimeException e) {
                // gone while we looked
            }
        }
        return false;
    }

    private ObjectNode sessionJson(SessionShell s) {
        ObjectNode o = json.createObjectNode();
        o.put("sessionId", s.id);
        ArrayNode cmds = o.putArray("commands");
        s.commands().forEach(c -> cmds.add(cmdJson(c)));
        return o;
    }

    private ObjectNode cmdJson(SessionShell.Command c) {
        ObjectNode o = json.createObjectNode();
        o.put("id", c.id);
        o.put("command", c.text);
        if (c.exit.isDone()) {
            o.put("exitCode", c.exit.join());
        }
        return o;
    }

    // ------------------------------------------------------------------ toolbox: files

    /** Parts {@code files[i].path} then {@code files[i].file}; a file part before its path is refused. */
    private void bulkUpload(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        if (b == null) {
            return;
        }
        Optional<Multipart> mp = Multipart.open(req.header("Content-Type"), req.body());
        if (mp.isEmpty()) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "expected multipart/form-data");
            return;
        }
        Map<String, String> paths = new LinkedHashMap<>();
        Optional<Multipart.Part> part;
        while ((part = mp.get().next()).isPresent()) {
            Multipart.Part p = part.get();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("files\\[(\\d+)]\\.(path|file)").matcher(p.name());
            if (!m.matches()) {
                continue;
            }
            if (m.group(2).equals("path")) {
                byte[] raw = p.body().readNBytes(MAX_PATH_PART + 1); // held whole, so bounded: a path, not a payload
                if (raw.length > MAX_PATH_PART) {
                    failToolbox(req, resp, 400, "BAD_REQUEST", "the part files[" + m.group(1) + "].path is over "
                            + MAX_PATH_PART + " bytes; it must hold the file's path, the bytes go in files[" + m.group(1) + "].file");
                    return;
                }
                paths.put(m.group(1), new String(raw, StandardCharsets.UTF_8));
                continue;
            }
            String path = paths.get(m.group(1));
            if (path == null) {
                failToolbox(req, resp, 400, "BAD_REQUEST", "file part files[" + m.group(1) + "].file came before its path part");
                return;
            }
            if (!writeFile(b, req, resp, abs(path), p.body())) {
                return;
            }
        }
        resp.empty(200);
    }

    private void uploadV2(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        if (b == null) {
            return;
        }
        Optional<String> path = req.query("path").filter(s -> !s.isEmpty());
        if (path.isEmpty()) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "path is required");
            return;
        }
        Optional<Multipart> mp = Multipart.open(req.header("Content-Type"), req.body());
        InputStream data = req.body();
        if (mp.isPresent()) {
            Optional<Multipart.Part> p;
            data = null;
            while ((p = mp.get().next()).isPresent()) {
                if (p.get().name().equals("file")) {
                    data = p.get().body();
                    break;
                }
            }
            if (data == null) {
                failToolbox(req, resp, 400, "BAD_REQUEST", "no file field");
                return;
            }
        }
        if (writeFile(b, req, resp, abs(path.get()), data)) {
            resp.empty(200);
        }
    }

    private boolean writeFile(Box b, Request req, Response resp, String path, InputStream data) throws IOException {
        try {
            // 0666 minus the daemon's umask 022
            b.sandbox.write(path, data, 0644);
            return true;
        } catch (AccessDeniedException e) {
            failToolbox(req, resp, 403, "FORBIDDEN", "permission denied: " + path);
        } catch (IllegalArgumentException | java.nio.file.FileSystemException e) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "cannot write " + path + ": " + e.getMessage());
        }
        return false;
    }

    /** Answers {@code multipart/form-data}: a part {@code file} per path found, {@code error} per path not. */
    private void bulkDownload(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        JsonNode body = b == null ? null : readJson(req);
        if (b == null) {
            return;
        }
        String boundary = "airlock-" + UUID.randomUUID();
        try (OutputStream o = resp.stream(200, "multipart/form-data; boundary=" + boundary)) {
            for (JsonNode n : body == null ? json.createArrayNode() : body.path("paths")) {
                String path = n.asText();
                o.write(("--" + boundary + "\r\n").getBytes(StandardCharsets.UTF_8));
                InputStream in;
                try {
                    in = b.sandbox.read(abs(path));
                } catch (NoSuchFileException | IllegalArgumentException | AccessDeniedException e) {
                    String err = error(404, "FILE_NOT_FOUND", "file not found: " + path, "/files/bulk-download").toString();
                    o.write(("Content-Disposition: form-data; name=\"error\"; filename=\"" + path + "\"\r\n"
                            + "Content-Type: application/json\r\n\r\n" + err + "\r\n").getBytes(StandardCharsets.UTF_8));
                    continue;
                }
                try (in) {
                    o.write(("Content-Disposition: form-data; name=\"file\"; filename=\"" + path + "\"\r\n"
                            + "Content-Type: application/octet-stream\r\n\r\n").getBytes(StandardCharsets.UTF_8));
                    in.transferTo(o);
                    o.write("\r\n".getBytes(StandardCharsets.UTF_8));
                }
            }
            o.write(("--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    private void download(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        if (b == null) {
            return;
        }
        String path = req.query("path").orElse("");
        InputStream in;
        try {
            in = b.sandbox.read(abs(path));
        } catch (NoSuchFileException | IllegalArgumentException e) {
            failToolbox(req, resp, 404, "FILE_NOT_FOUND", "file not found: " + path);
            return;
        } catch (AccessDeniedException e) {
            failToolbox(req, resp, 403, "FORBIDDEN", "permission denied: " + path);
            return;
        }
        try (in; OutputStream o = resp.stream(200, "application/octet-stream")) {
            in.transferTo(o);
        }
    }

    private void folder(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        if (b == null) {
            return;
        }
        Optional<String> path = req.query("path").filter(s -> !s.isEmpty());
        Optional<Integer> mode = octal(req.query("mode").orElse("0755"));
        if (path.isEmpty() || mode.isEmpty()) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "path and an octal mode are required");
            return;
        }
        try {
            b.sandbox.mkdirs(abs(path.get()), mode.get());
        } catch (IOException | IllegalArgumentException e) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "cannot create " + path.get() + ": " + e.getMessage());
            return;
        }
        resp.empty(201);
    }

    private void permissions(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        if (b == null) {
            return;
        }
        Optional<String> path = req.query("path").filter(s -> !s.isEmpty());
        Optional<Integer> mode = req.query("mode").flatMap(DaytonaEmulator::octal);
        if (path.isEmpty()) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "path is required");
            return;
        }
        if (b.sandbox.stat(abs(path.get())).isEmpty()) {
            failToolbox(req, resp, 404, "FILE_NOT_FOUND", "file not found: " + path.get());
            return;
        }
        try {
            if (mode.isPresent()) {
                b.sandbox.chmod(abs(path.get()), mode.get());
                chmods.add(abs(path.get()) + " " + Integer.toOctalString(mode.get()));
            }
        } catch (IOException | IllegalArgumentException e) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "cannot change " + path.get() + ": " + e.getMessage());
            return;
        }
        resp.empty(200);
    }

    private void info(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        if (b == null) {
            return;
        }
        String path = req.query("path").orElse("");
        Optional<PosixFileAttributes> a = b.sandbox.stat(abs(path));
        if (a.isEmpty()) {
            failToolbox(req, resp, 404, "FILE_NOT_FOUND", "file not found: " + path);
            return;
        }
        ObjectNode o = json.createObjectNode();
        o.put("name", path.substring(path.lastIndexOf('/') + 1));
        o.put("isDir", a.get().isDirectory());
        o.put("size", a.get().size());
        o.put("mode", modeString(a.get()));
        o.put("permissions", "0" + Integer.toOctalString(modeBits(a.get())));
        o.put("owner", a.get().owner().getName());
        o.put("group", a.get().group().getName());
        o.put("modTime", a.get().lastModifiedTime().toString());
        resp.json(200, o.toString());
    }

    private void deleteFile(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        if (b == null) {
            return;
        }
        String path = req.query("path").orElse("");
        boolean recursive = req.query("recursive").map(Boolean::parseBoolean).orElse(false);
        boolean found;
        try {
            found = b.sandbox.delete(abs(path), recursive);
        } catch (IOException | IllegalArgumentException e) {
            failToolbox(req, resp, 400, "BAD_REQUEST", "cannot delete " + path + ": " + e.getMessage());
            return;
        }
        if (!found) {
            failToolbox(req, resp, 404, "FILE_NOT_FOUND", "file not found: " + path);
            return;
        }
        resp.empty(204);
    }

    // ------------------------------------------------------------------ helpers

    private Box box(Request req, Response resp, String param, boolean toolbox) throws IOException {
        String id = req.param(param);
        Box b = boxes.get(id);
        if (b == null) {
            b = boxes.values().stream().filter(x -> x.record.path("name").asText().equals(id)).findFirst().orElse(null);
        }
        if (b == null) {
            if (toolbox) {
                failToolbox(req, resp, 404, "SANDBOX_NOT_FOUND", "Sandbox with ID or name " + id + " not found");
            } else {
                fail(req, resp, 404, "NOT_FOUND", "Sandbox with ID or name " + id + " not found");
            }
            return null;
        }
        if (toolbox && !b.state.equals("started")) {
            beforeToolboxRefusal.accept(req.path());
            failToolbox(req, resp, 409, "SANDBOX_NOT_STARTED", "Sandbox is not started (state " + b.state + ")");
            return null;
        }
        return b;
    }

    private SessionShell session(Request req, Response resp) throws IOException {
        Box b = box(req, resp, "sandbox", true);
        if (b == null) {
            return null;
        }
        SessionShell s = b.sessions.get(req.param("session"));
        if (s == null) {
            failToolbox(req, resp, 404, "SESSION_NOT_FOUND", "session not found");
        }
        return s;
    }

    private SessionShell.Command command(Request req, Response resp) throws IOException {
        SessionShell s = session(req, resp);
        if (s == null) {
            return null;
        }
        SessionShell.Command c = s.command(req.param("cmd")).orElse(null);
        if (c == null) {
            failToolbox(req, resp, 404, "COMMAND_NOT_FOUND", "command not found");
        }
        return c;
    }

    private JsonNode readJson(Request req) throws IOException {
        byte[] b = req.bodyBytes(JSON_MAX);
        if (b.length == 0) {
            return null;
        }
        try {
            return json.readTree(b);
        } catch (IOException e) {
            return null;
        }
    }

    private static Map<String, String> envs(JsonNode n) {
        Map<String, String> env = new LinkedHashMap<>();
        if (n.isObject()) {
            n.fields().forEachRemaining(e -> env.put(e.getKey(), e.getValue().asText()));
        }
        return env;
    }

    private static String abs(String path) {
        return path.startsWith("/") ? path : HOME + "/" + path;
    }

    private static Optional<Integer> octal(String s) {
        try {
            int m = Integer.parseInt(s, 8);
            return m >= 0 && m <= 07777 ? Optional.of(m) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private void fail(Request req, Response resp, int status, String code, String message) throws IOException {
        ObjectNode e = error(status, null, message, req.call());
        resp.json(status, e.toString());
    }

    private void failToolbox(Request req, Response resp, int status, String code, String message) throws IOException {
        resp.json(status, error(status, code, message, req.call()).toString());
    }

    /** The service's per-sandbox quota check: the first request over its maximum, as the service words it, or null. */
    private static String overQuota(JsonNode body) {
        int cpu = body.path("cpu").asInt(0);
        int memory = body.path("memory").asInt(0);
        int disk = body.path("disk").asInt(0);
        if (cpu > MAX_CPU_PER_SANDBOX) {
            return "CPU request " + cpu + " exceeds maximum allowed per sandbox (" + MAX_CPU_PER_SANDBOX + ")";
        }
        if (memory > MAX_MEMORY_GB_PER_SANDBOX) {
            return "Memory request " + memory + "GB exceeds maximum allowed per sandbox (" + MAX_MEMORY_GB_PER_SANDBOX + "GB)";
        }
        if (disk > MAX_DISK_GB_PER_SANDBOX) {
            return "Disk request " + disk + "GB exceeds maximum allowed per sandbox (" + MAX_DISK_GB_PER_SANDBOX + "GB)";
        }
        return null;
    }

    /**
     * The API key check, as the service's guard answers: 401 {@code Unauthorized} in the control
     * error shape (no {@code code}) for a missing, wrong or revoked key, on the API and the toolbox.
     */
    private Optional<EmulatorHttpServer.Refusal> authenticate(Request req) {
        Optional<String> key = req.bearer();
        if (key.isPresent() && credentials.accepts(API_KEY_VARIABLE, key.get())) {
            return Optional.empty();
        }
        return Optional.of(new EmulatorHttpServer.Refusal(401, error(401, null, "Unauthorized", req.path()).toString()));
    }

    @Override
    public EmulatorCredentials credentials() {
        return credentials;
    }

    private static ObjectNode error(int status, String code, String message, String path) {
        ObjectNode e = new ObjectMapper().createObjectNode();
        e.put("statusCode", status);
        e.put("error", reason(status));
        e.put("message", message);
        e.put("path", path);
        e.put("timestamp", Instant.now().toString());
        if (code != null) {
            e.put("code", code);
        }
        return e;
    }

    private static String reason(int status) {
        return switch (status) {
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 408 -> "Request Timeout";
            case 409 -> "Conflict";
            case 429 -> "Too Many Requests";
            case 500 -> "Internal Server Error";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            default -> "Error";
        };
    }

    /** The daemon's log text: invalid UTF-8 replaced, NUL dropped. Not the command's bytes. */
    static String logText(byte[] raw) {
        CharsetDecoder d = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE);
        try {
            CharBuffer c = d.decode(ByteBuffer.wrap(raw));
            return c.toString().replace("\0", "");
        } catch (java.nio.charset.CharacterCodingException e) {
            return "";
        }
    }

    private static void copy(InputStream in, ByteArrayOutputStream to) {
        byte[] buf = new byte[8192];
        try (in) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                synchronized (to) {
                    // logs are kept up to 16 MiB; a real daemon keeps them on disk, this one in heap
                    if (to.size() < (16 << 20)) {
                        to.write(buf, 0, Math.min(n, (16 << 20) - to.size()));
                    }
                }
            }
        } catch (IOException ignored) {
            // the process ended
        }
    }

    private static byte[] readAll(InputStream in) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        copy(in, b);
        return b.toByteArray();
    }

    private static int modeBits(PosixFileAttributes a) {
        int m = 0;
        for (PosixFilePermission p : a.permissions()) {
            m |= 1 << (8 - p.ordinal());
        }
        return m;
    }

    private static String modeString(PosixFileAttributes a) {
        return (a.isDirectory() ? "d" : "-") + java.nio.file.attribute.PosixFilePermissions.toString(a.permissions());
    }
}
