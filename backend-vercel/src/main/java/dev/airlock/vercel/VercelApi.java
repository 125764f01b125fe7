package dev.airlock.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.NetworkMode;
import dev.airlock.remote.BearerToken;
import dev.airlock.remote.CallKind;
import dev.airlock.remote.Http;
import dev.airlock.remote.HttpClients;
import dev.airlock.remote.HttpSettings;
import dev.airlock.remote.Redactor;
import dev.airlock.remote.RemoteCalls;
import dev.airlock.remote.Resource;
import dev.airlock.remote.RetryAfter;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.remote.Service;
import dev.airlock.remote.WireFailure;
import dev.airlock.settings.Settings;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;

import java.io.BufferedReader;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPOutputStream;

/**
 * Vercel Sandbox's REST API over OkHttp, every call through {@link RemoteCalls}: reads, status
 * calls, stop, delete, kill and whole-file writes may be retried; {@code POST /cmd} and create
 * are dispatches, sent once (a create refused 429 excepted: it made nothing, see
 * {@link RateLimitedCreate}).
 */
final class VercelApi implements AutoCloseable {
    static final Service SERVICE = new Service("Vercel", VercelSettings.TOKEN_VARIABLE, VercelSettings.API_URL);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final MediaType JSON_TYPE = MediaType.get("application/json");
    private static final MediaType GZIP = MediaType.get("application/gzip");

    /**
     * A session as {@code create} and {@code GET session} answer it; {@code routes} is each exposed
     * port's URL, as the answer's {@code routes} gave it (empty where the answer has none).
     */
    record SessionInfo(String sandboxName, String sessionId, String status, long createdAt, Map<String, String> tags,
                       Map<Integer, String> routes) {
    }

    /** A part of a tar to upload: its entry name (relative to /), mode and bytes. */
    interface TarSource {
        long size();

        /**
         * Writes the {@link #size()} bytes. The source's own failure (its content cannot be read,
         * or is not the size it declared) is a {@link ContentFailure}; any other exception is the
         * upload's.
         */
        void writeTo(OutputStream out) throws IOException;
    }

    /** The content to upload failed, not Vercel: never retried, never counted against the service. */
    static final class ContentFailure extends IOException {
        ContentFailure(String message) {
            super(message);
        }
    }

    private final VercelSettings settings;
    private final OkHttpClient http;
    private final OkHttpClient longHttp;
    private final RemoteCalls calls;
    private final BearerToken token;
    private final Redactor redactor;

    VercelApi(VercelSettings settings, Settings raw) {
        this.settings = settings;
        this.token = new BearerToken(settings.requireToken());
        this.redactor = Redactor.of(settings.requireToken());
        HttpSettings hs = HttpSettings.from(raw, VercelSettings.PREFIX, System.getenv());
        // A 429 that gives only X-RateLimit-Reset is read as the Retry-After it means.
        this.http = HttpClients.create(hs).newBuilder().addInterceptor(new ResetAsRetryAfter(System::currentTimeMillis)).build();
        // Waits and log streams may stay silent for as long as a command runs.
        this.longHttp = http.newBuilder().readTimeout(0, TimeUnit.MILLISECONDS).callTimeout(0, TimeUnit.MILLISECONDS).build();
        this.calls = new RemoteCalls(SERVICE, RetryPolicy.from(raw, VercelSettings.PREFIX));
    }

    private volatile boolean closed;

    @Override
    public void close() {
        closed = true;
        HttpClients.close(http);
    }

    // ---------------------------------------------------------------- sandboxes

    /**
     * Creates a sandbox: a dispatch (a second create would make a second sandbox), except after a
     * 429, which made nothing: then it is sent again after the service's wait, within the retry
     * policy's bounds ({@link RateLimitedCreate}).
     */
    SessionInfo create(Map<String, String> tags) {
        ObjectNode body = JSON.createObjectNode();
        body.put("projectId", settings.requireProject());
        settings.image().ifPresent(i -> body.put("image", i));
        settings.runtime().ifPresent(r -> body.put("runtime", r));
        body.putObject("resources").put("vcpus", settings.vcpus());
        body.put("timeout", settings.timeout().toMillis());
        body.put("persistent", settings.persistent());
        ObjectNode env = body.putObject("env");
        settings.env().forEach(env::put);
        ObjectNode t = body.putObject("tags");
        tags.forEach(t::put);
        settings.ports().forEach(body.putArray("ports")::add);
        settings.snapshot().ifPresent(id -> body.putObject("source").put("type", "snapshot").put("snapshotId", id));
        if (settings.network() == NetworkMode.OFF) {
            body.putObject("networkPolicy").put("mode", "deny-all"); // as the SDK sends networkPolicy: "deny-all"
        } else if (settings.network() == NetworkMode.ALLOWLIST) {
            // As the SDK sends networkPolicy {allow: [domains], subnets: {allow: [ranges]}}.
            ObjectNode policy = body.putObject("networkPolicy");
            ArrayNode domains = policy.putArray("allow");
            ArrayNode ranges = policy.putObject("subnets").putArray("allow");
            settings.allowed().forEach(e -> (e.cidr() ? ranges : domains).add(e.destination()));
        }
        String path = settings.runtime().isPresent() ? "/v2/sandboxes" : "/v3/sandboxes";
        try {
            JsonNode n = RateLimitedCreate.send(calls.policy(), () -> calls.dispatch("create a sandbox", Resource.none(),
                    () -> json(http, post(url(path), body), "sandbox-create")));
            return session(n);
        } catch (AirlockException e) {
            if (settings.snapshot().isPresent() && status(e) == 410) {
                // 410 snapshot_not_found: the one create answer that names the snapshot.
                throw new dev.airlock.ConfigurationException("there is no Vercel snapshot " + settings.snapshot().get() + " ("
                        + VercelSettings.SNAPSHOT + "): it expired, was deleted or never existed; take one with"
                        + " 'airlock --backend vercel snapshot' or unset " + VercelSettings.SNAPSHOT, e);
            }
            throw e;
        }
    }

    /**
     * Takes a snapshot of the session's filesystem and returns its id: a dispatch (a second
     * snapshot would be a second one). The service stops the session as part of it.
     */
    String snapshot(String sessionId) {
        JsonNode n = inSession(sessionId, () -> calls.dispatch("take a snapshot", Resource.sandbox(sessionId),
                () -> json(http, post(url("/v2/sandboxes/sessions/" + sessionId + "/snapshot"), JSON.createObjectNode()), "")));
        String id = n.path("snapshot").path("id").asText("");
        if (id.isEmpty()) {
            throw new BackendException("Vercel answered the snapshot without an id");
        }
        return id;
    }

    /** Makes {@code snapshotId} the snapshot the sandbox's next session boots from ({@code currentSnapshotId}). */
    void setCurrentSnapshot(String name, String snapshotId) {
        ObjectNode body = JSON.createObjectNode().put("currentSnapshotId", snapshotId);
        calls.call(CallKind.STATUS, "set the sandbox's current snapshot", Resource.sandbox(name),
                () -> json(http, new Request.Builder().url(url("/v2/sandboxes/" + name, "projectId", settings.requireProject()))
                        .patch(RequestBody.create(body.toString(), JSON_TYPE)), ""));
    }

    /** Starts a new session of a stopped sandbox ({@code GET ?resume=true}) and returns it. */
    SessionInfo resume(String name) {
        JsonNode n = calls.call(CallKind.STATUS, "resume the sandbox", Resource.sandbox(name),
                () -> json(http, new Request.Builder().url(url("/v2/sandboxes/" + name, "projectId", settings.requireProject(),
                        "resume", "true")).get(), ""));
        return session(n);
    }

    /** Deletes a snapshot; one already gone (404, 410) is fine. */
    void deleteSnapshot(String snapshotId) {
        ignoring(() -> calls.call(CallKind.STATUS, "delete the snapshot", Resource.none(),
                () -> json(http, new Request.Builder().url(url("/v2/sandboxes/snapshots/" + snapshotId)).delete(), "")), 404, 410);
    }

    SessionInfo session(String sessionId) {
        JsonNode n = calls.call(CallKind.STATUS, "get the session", Resource.sandbox(sessionId),
                () -> json(http, new Request.Builder().url(url("/v2/sandboxes/sessions/" + sessionId)).get(), ""));
        return new SessionInfo("", sessionId, n.path("session").path("status").asText(), 0, Map.of(), routes(n));
    }

    /** A sandbox by name with its current session; empty when it does not exist. */
    Optional<SessionInfo> sandbox(String name) {
        try {
            JsonNode n = calls.call(CallKind.STATUS, "get the sandbox", Resource.sandbox(name),
                    () -> json(http, new Request.Builder().url(url("/v2/sandboxes/" + name, "projectId", settings.requireProject())).get(), ""));
            return Optional.of(session(n));
        } catch (AirlockException e) {
            if (status(e) == 404) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** The sandboxes carrying {@code tag=value}. */
    List<SessionInfo> list(String tag, String value) {
        List<SessionInfo> out = new ArrayList<>();
        for (JsonNode sb : sandboxes("tags", tag + ":" + value)) {
            out.add(sandboxInfo(sb, sb.path("currentSessionId").asText(), sb.path("status").asText(), Map.of()));
        }
        return out;
    }

    /**
     * Every sandbox of the project as the listing answers it, page after page (the service's
     * {@code pagination.next} sent back as {@code cursor} until it is null); {@code filter} is
     * more query parameters, name then value.
     */
    List<JsonNode> sandboxes(String... filter) {
        List<JsonNode> out = new ArrayList<>();
        String cursor = null;
        java.util.Set<String> seen = new java.util.HashSet<>();
        do {
            List<String> query = new ArrayList<>(List.of("project", settings.requireProject()));
            query.addAll(List.of(filter));
            if (cursor != null) {
                query.addAll(List.of("cursor", cursor));
            }
            HttpUrl u = url("/v2/sandboxes", query.toArray(String[]::new));
            JsonNode n = calls.call(CallKind.READ, "list sandboxes", Resource.none(),
                    () -> json(http, new Request.Builder().url(u).get(), ""));
            n.path("sandboxes").forEach(out::add);
            JsonNode next = n.path("pagination").path("next");
            cursor = next.isTextual() && !next.asText().isEmpty() ? next.asText() : null;
            if (cursor != null && !seen.add(cursor)) {
                throw new BackendException("Vercel's sandbox listing gave the cursor " + cursor + " twice; it would never end");
            }
        } while (cursor != null);
        return out;
    }

    /** The snapshot session {@code sessionId} booted from ({@code sourceSnapshotId}); empty for none or a gone session. */
    Optional<String> sourceSnapshot(String sessionId) {
        try {
            JsonNode n = calls.call(CallKind.READ, "get the session", Resource.none(),
                    () -> json(http, new Request.Builder().url(url("/v2/sandboxes/sessions/" + sessionId)).get(), ""));
            String id = n.path("session").path("sourceSnapshotId").asText("");
            return id.isEmpty() ? Optional.empty() : Optional.of(id);
        } catch (AirlockException e) {
            if (status(e) == 404 || status(e) == 410) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** A snapshot's {@code status} (created, failed, deleted); empty when the service no longer knows it (404, 410). */
    Optional<String> snapshotStatus(String snapshotId) {
        try {
            JsonNode n = calls.call(CallKind.READ, "get the snapshot", Resource.none(),
                    () -> json(http, new Request.Builder().url(url("/v2/sandboxes/snapshots/" + snapshotId)).get(), ""));
            return Optional.of(n.path("snapshot").path("status").asText(""));
        } catch (AirlockException e) {
            if (status(e) == 404 || status(e) == 410) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** Stops a session; one that is gone, stopped or stopping is fine. */
    void stop(String sessionId) {
        ignoring(() -> calls.call(CallKind.STATUS, "stop the sandbox", Resource.sandbox(sessionId),
                () -> json(http, post(url("/v2/sandboxes/sessions/" + sessionId + "/stop"), JSON.createObjectNode()), "")), 404, 410, 422);
    }

    /** Deletes a sandbox and the snapshots it leaves orphaned; 404 means it is already gone, which is what was wanted. */
    void delete(String name) {
        delete(name, true);
    }

    /**
     * Deletes a sandbox; {@code orphanSnapshots}: its snapshots go too (false where the caller took
     * snapshots meant to outlive it). 404 means it is already gone, which is what was wanted.
     */
    void delete(String name, boolean orphanSnapshots) {
        HttpUrl u = orphanSnapshots ? url("/v2/sandboxes/" + name, "projectId", settings.requireProject(), "deleteOrphanSnapshots", "true")
                : url("/v2/sandboxes/" + name, "projectId", settings.requireProject());
        ignoring(() -> calls.call(CallKind.STATUS, "delete the sandbox", Resource.sandbox(name),
                () -> json(http, new Request.Builder().url(u).delete(), "")), 404);
    }

    void extend(String sessionId, Duration by) {
        ObjectNode body = JSON.createObjectNode().put("duration", by.toMillis());
        calls.call(CallKind.STATUS, "extend the sandbox's timeout", Resource.sandbox(sessionId),
                () -> json(http, post(url("/v2/sandboxes/sessions/" + sessionId + "/extend-timeout"), body), ""));
    }

    // ---------------------------------------------------------------- commands

    /** Starts {@code argv} detached and returns its command id: sent once, never again. */
    String run(String sessionId, List<String> argv, String cwd) {
        ObjectNode body = JSON.createObjectNode();
        body.put("command", argv.get(0));
        argv.subList(1, argv.size()).forEach(body.putArray("args")::add);
        if (cwd != null) {
            body.put("cwd", cwd);
        }
        body.putObject("env");
        JsonNode n = inSession(sessionId, () -> calls.dispatch("start the command", Resource.sandbox(sessionId),
                () -> json(http, post(url("/v2/sandboxes/sessions/" + sessionId + "/cmd"), body), "")));
        String id = n.path("command").path("id").asText("");
        if (id.isEmpty()) {
            throw new BackendException("Vercel answered the command without an id");
        }
        return id;
    }

    /**
     * A command started with {@code wait}: its id, and the open answer whose last line will carry
     * its exit code ({@link #awaitStarted}), so the end costs no call of its own.
     */
    static final class Started implements AutoCloseable {
        final String id;
        private final Response response;
        private final BufferedReader lines;

        Started(String id, Response response, BufferedReader lines) {
            this.id = id;
            this.response = response;
            this.lines = lines;
        }

        @Override
        public void close() {
            response.close();
        }
    }

    /**
     * Starts {@code argv} with {@code env} set and {@code wait}, and returns once the answer's
     * first line named the command: sent once, never again (a lost answer before that line is an unknown outcome, as
     * for any dispatch). The answer stays open for {@link #awaitStarted}; the caller closes it.
     */
    Started start(String sessionId, List<String> argv, String cwd, Map<String, String> env) {
        ObjectNode body = JSON.createObjectNode();
        body.put("command", argv.get(0));
        argv.subList(1, argv.size()).forEach(body.putArray("args")::add);
        if (cwd != null) {
            body.put("cwd", cwd);
        }
        ObjectNode vars = body.putObject("env"); // in the body, never in argv
        env.forEach(vars::put);
        body.put("wait", true);
        return inSession(sessionId, () -> calls.dispatch("start the command", Resource.sandbox(sessionId), () -> {
            Request r = token.apply(post(url("/v2/sandboxes/sessions/" + sessionId + "/cmd"), body)).build();
            // The read timeout guards the start; a command silent for longer cuts the answer, and
            // its end is then asked of the wait endpoint (awaitStarted).
            Response response = streamed(r);
            BufferedReader lines = new BufferedReader(new InputStreamReader(response.body().byteStream(), StandardCharsets.UTF_8));
            try {
                String first = lines.readLine();
                String id = first == null ? "" : JSON.readTree(first).path("command").path("id").asText("");
                if (id.isEmpty()) {
                    response.close();
                    throw new BackendException("Vercel answered the command without an id");
                }
                return new Started(id, response, lines);
            } catch (IOException e) {
                response.close();
                throw WireFailure.lost(e);
            }
        }));
    }

    /**
     * The exit code of a command {@link #start} started: the last line of its answer, or, when the
     * answer was cut or ended without one (the edge cuts long requests; a stopped session ends
     * it early), the wait endpoint's, which also says why a session ended. Closes the answer.
     */
    int awaitStarted(String sessionId, Started started) {
        try (started) {
            String line;
            while ((line = started.lines.readLine()) != null) {
                JsonNode n = JSON.readTree(line);
                JsonNode code = n.path("command").path("exitCode");
                if (code.isNumber()) {
                    return code.asInt();
                }
                if (n.path("stream").asText("").equals("error")) {
                    break;
                }
            }
        } catch (IOException e) {
            // cut: asked again below
        }
        return await(sessionId, started.id);
    }

    /** The most of each stream {@link #runToEnd} keeps, as the core's raw runs do. */
    private static final int RAW_OUTPUT_MAX = 1 << 20;

    /**
     * Runs one of Airlock's own short scripts to its end in a single call: {@code POST cmd} with
     * {@code wait} and {@code logs}, whose NDJSON answer carries the command's id, its output as
     * log entries and, last, its exit code. Where the start, the wait and two output downloads
     * would each be a round trip. The logs are text (invalid UTF-8 is replaced), so this is for
     * scripts whose output is a message, never bytes. A dispatch, sent once; an answer cut after
     * the id (the edge cuts long streams, a read timed out) is finished with the wait endpoint
     * and the logs endpoint, which replays the output from its start.
     */
    dev.airlock.spi.RawResult runToEnd(String sessionId, List<String> argv) {
        ObjectNode body = JSON.createObjectNode();
        body.put("command", argv.get(0));
        argv.subList(1, argv.size()).forEach(body.putArray("args")::add);
        body.putObject("env");
        body.put("wait", true).put("logs", true);
        Ndjson answer = inSession(sessionId, () -> calls.dispatch("run a command", Resource.sandbox(sessionId),
                () -> execute(http, token.apply(post(url("/v2/sandboxes/sessions/" + sessionId + "/cmd"), body)).build(), resp -> {
                    Ndjson a = new Ndjson();
                    try (BufferedReader br = new BufferedReader(new InputStreamReader(resp.body().byteStream(), StandardCharsets.UTF_8))) {
                        String line;
                        while ((line = br.readLine()) != null) {
                            a.accept(line);
                        }
                    } catch (IOException e) {
                        if (a.id == null) {
                            throw e; // nothing says it started: the dispatch's outcome is unknown
                        }
                        a.exit = null; // finished below through the wait and the logs
                    }
                    return a;
                })));
        if (answer.id == null) {
            throw new BackendException("Vercel answered the command without an id");
        }
        if (answer.exit == null) {
            int exit = await(sessionId, answer.id);
            Ndjson replay = new Ndjson();
            followLogs(sessionId, answer.id, replay::accept);
            return new dev.airlock.spi.RawResult(exit, replay.out.toByteArray(), replay.err.toByteArray());
        }
        return new dev.airlock.spi.RawResult(answer.exit, answer.out.toByteArray(), answer.err.toByteArray());
    }

    /**
     * A command's NDJSON, line by line: {@code {command{id, exitCode}}} lines and
     * {@code {stream, data}} log entries (each stream capped at {@link #RAW_OUTPUT_MAX}). An
     * {@code error} entry (the session stopped) leaves the exit unknown, for the wait to say why.
     */
    private static final class Ndjson {
        String id;
        Integer exit;
        boolean failed;
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        final java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();

        void accept(String line) {
            if (line.isBlank()) {
                return;
            }
            JsonNode n;
            try {
                n = JSON.readTree(line);
            } catch (IOException e) {
                return; // not a line of ours
            }
            JsonNode c = n.path("command");
            if (c.isObject()) {
                if (id == null) {
                    id = c.path("id").asText(null);
                }
                if (c.path("exitCode").isNumber() && !failed) {
                    exit = c.path("exitCode").asInt();
                }
                return;
            }
            String stream = n.path("stream").asText("");
            java.io.ByteArrayOutputStream to = stream.equals("stdout") ? out : stream.equals("stderr") ? err : null;
            if (to == null) {
                if (stream.equals("error")) {
                    failed = true;
                    exit = null;
                }
                return;
            }
            byte[] data = n.path("data").asText("").getBytes(StandardCharsets.UTF_8);
            to.write(data, 0, Math.min(data.length, Math.max(0, RAW_OUTPUT_MAX - to.size())));
        }
    }

    /**
     * Blocks until the command ends and returns its exit code. The edge cuts long requests: a cut
     * wait is asked again (it only reads), as often as it takes.
     */
    int await(String sessionId, String cmdId) {
        while (true) {
            try {
                // A 410 here is the session's end (an up sandbox's lifetime ran out): said as such, see inSession.
                JsonNode n = inSession(sessionId, () -> calls.call(CallKind.STATUS, "wait for the command",
                        Resource.sandbox(sessionId), () -> json(longHttp, new Request.Builder().url(url("/v2/sandboxes/sessions/"
                                + sessionId + "/cmd/" + cmdId, "wait", "true")).get(), "")));
                JsonNode code = n.path("command").path("exitCode");
                if (code.isNumber()) {
                    return code.asInt();
                }
            } catch (AirlockException e) {
                if (!(e.getCause() instanceof WireFailure w) || w.stage() != WireFailure.Stage.LOST) {
                    throw e;
                }
            }
            if (Thread.currentThread().isInterrupted() || closed) {
                throw new BackendException("stopped waiting for the command: the environment closed or the wait was interrupted");
            }
        }
    }

    /**
     * Follows the command's NDJSON logs (progress only: output travels through files), reconnecting
     * when the stream is cut and skipping the lines already seen; returns when the log ends.
     * {@code onLine} gets each NDJSON line (one log entry: a chunk of a stream, not a line of the
     * command's output). Returns how many times it reconnected.
     */
    int followLogs(String sessionId, String cmdId, java.util.function.Consumer<String> onLine) {
        long[] seen = {0};
        int[] attempts = {0};
        while (true) {
            try {
                calls.call(CallKind.READ, "read the command's logs", Resource.sandbox(sessionId), () -> {
                    attempts[0]++;
                    Request r = new Request.Builder().url(url("/v2/sandboxes/sessions/" + sessionId + "/cmd/" + cmdId + "/logs"))
                            .get().build();
                    return execute(longHttp, r, resp -> {
                        long index = 0;
                        try (BufferedReader br = new BufferedReader(new InputStreamReader(resp.body().byteStream(), StandardCharsets.UTF_8))) {
                            String line;
                            while ((line = br.readLine()) != null) {
                                if (index++ >= seen[0]) { // a reconnect replays from the start: skip what was seen
                                    seen[0] = index;
                                    onLine.accept(line);
                                }
                            }
                        }
                        return true;
                    });
                });
                return attempts[0] - 1;
            } catch (AirlockException e) {
                if (!(e.getCause() instanceof WireFailure w) || w.stage() != WireFailure.Stage.LOST) {
                    throw e;
                }
            }
            if (Thread.currentThread().isInterrupted() || closed) {
                return attempts[0] - 1;
            }
        }
    }

    /** Sends {@code signal} to a running command; one that already ended is fine. */
    void kill(String sessionId, String cmdId, int signal) {
        ObjectNode body = JSON.createObjectNode().put("signal", signal);
        ignoring(() -> calls.call(CallKind.STATUS, "kill the command", Resource.sandbox(sessionId),
                () -> json(http, post(url("/v2/sandboxes/sessions/" + sessionId + "/cmd/" + cmdId + "/kill"), body), "")), 400, 404, 410);
    }

    // ---------------------------------------------------------------- files

    /**
     * Writes one file through {@code fs/write}: a gzipped tar streamed from {@code source} with one
     * entry named {@code path} (relative to /) and header mode {@code mode}. The source is read
     * again on a retry, so it must be repeatable.
     *
     * <p>When the source fails ({@link ContentFailure}) the upload still ends as a request, the
     * archive cut short, so Vercel answers only once it has stopped unpacking and the caller's
     * clean-up cannot race it; then the source's failure is thrown as a {@link BackendException},
     * whatever Vercel answered, without a retry and without counting against the service.
     */
    void write(String sessionId, String path, int mode, TarSource source) {
        String name = path.replaceFirst("^/+", "");
        AtomicReference<ContentFailure> failed = new AtomicReference<>();
        RequestBody body = new RequestBody() {
            @Override
            public MediaType contentType() {
                return GZIP;
            }

            @Override
            public void writeTo(BufferedSink sink) throws IOException {
                failed.set(null); // this attempt's only
                GZIPOutputStream gz = new AdaptiveGzipOutputStream(sink.outputStream(), 65536);
                Tar.header(gz, name, mode, source.size());
                try {
                    source.writeTo(gz);
                    Tar.finish(gz, source.size());
                } catch (ContentFailure e) {
                    failed.set(e); // the archive ends here; the request still completes
                }
                gz.finish();
                gz.flush();
            }
        };
        inSession(sessionId, () -> calls.call(CallKind.UPLOAD_PART, "write " + path, Resource.path(path), () -> {
            JsonNode answer;
            try {
                answer = json(http, new Request.Builder().url(url("/v2/sandboxes/sessions/" + sessionId + "/fs/write"))
                        .header("x-cwd", "/").post(body), "");
            } catch (WireFailure w) {
                throwIfFailed(failed.get());
                throw w;
            }
            throwIfFailed(failed.get());
            return answer;
        }));
    }

    /** The content's own failure, as one that is neither retried nor counted against Vercel (not a WireFailure). */
    private static void throwIfFailed(ContentFailure content) {
        if (content != null) {
            throw new BackendException(content.getMessage(), content);
        }
    }

    /** A file's bytes, streamed; the caller closes the stream (which ends the download). */
    InputStream read(String sessionId, String path) {
        ObjectNode body = JSON.createObjectNode().put("path", path).put("cwd", "/");
        Response resp = inSession(sessionId, () -> calls.call(CallKind.READ, "read " + path, Resource.path(path), () -> {
            Request r = token.apply(new Request.Builder().url(url("/v2/sandboxes/sessions/" + sessionId + "/fs/read"))
                    .post(RequestBody.create(body.toString(), JSON_TYPE))).build();
            return streamed(r);
        }));
        return new FilterInputStream(resp.body().byteStream()) {
            @Override
            public void close() throws IOException {
                resp.close();
            }
        };
    }

    // ---------------------------------------------------------------- plumbing

    /**
     * Sends {@code r} and returns its successful answer with the body still to read (the caller
     * streams and closes it); a refusal is read whole for its message, then closed.
     */
    private Response streamed(Request r) {
        Response response;
        try {
            response = http.newCall(r).execute();
        } catch (ConnectException e) {
            throw WireFailure.notSent(e);
        } catch (IOException e) {
            throw WireFailure.lost(e);
        }
        if (!response.isSuccessful()) {
            try (response) {
                String text = response.body().string();
                throw WireFailure.http(response.code(), redactor.redact(message(text)),
                        RetryAfter.fromHeaders(response::header, response.headers().names(), "", Instant.now()));
            } catch (IOException e) {
                throw WireFailure.lost(e);
            }
        }
        return response;
    }

    private HttpUrl url(String path, String... query) {
        HttpUrl base = HttpUrl.get(settings.apiUrl() + path);
        HttpUrl.Builder b = base.newBuilder();
        settings.teamId().ifPresent(t -> b.addQueryParameter("teamId", t));
        for (int i = 0; i + 1 < query.length; i += 2) {
            b.addQueryParameter(query[i], query[i + 1]);
        }
        return b.build();
    }

    private Request.Builder post(HttpUrl url, JsonNode body) {
        return new Request.Builder().url(url).post(RequestBody.create(body.toString(), JSON_TYPE));
    }

    private JsonNode json(OkHttpClient client, Request.Builder request, String bucket) {
        return execute(client, token.apply(request).build(), resp -> {
            String text = resp.body().string();
            return text.isEmpty() ? JSON.createObjectNode() : JSON.readTree(text);
        });
    }

    private <T> T execute(OkHttpClient client, Request request, Http.BodyReader<T> reader) {
        Request r = request.header("Authorization") == null ? token.apply(request.newBuilder()).build() : request;
        return Http.execute(client, r, "", redactor, reader);
    }

    private static String message(String text) {
        try {
            JsonNode n = JSON.readTree(text);
            JsonNode e = n.path("error");
            return e.path("code").asText("") + ": " + e.path("message").asText("");
        } catch (IOException e) {
            return "";
        }
    }

    private static SessionInfo session(JsonNode n) {
        JsonNode sb = n.path("sandbox");
        JsonNode s = n.path("session");
        return sandboxInfo(sb, s.path("id").asText(), s.path("status").asText(), routes(n));
    }

    private static SessionInfo sandboxInfo(JsonNode sb, String sessionId, String status, Map<Integer, String> routes) {
        Map<String, String> tags = new java.util.TreeMap<>();
        sb.path("tags").properties().forEach(e -> tags.put(e.getKey(), e.getValue().asText()));
        return new SessionInfo(sb.path("name").asText(), sessionId, status, sb.path("createdAt").asLong(), tags, routes);
    }

    /** The answer's {@code routes}: each port's {@code url}, as given. */
    private static Map<Integer, String> routes(JsonNode n) {
        Map<Integer, String> out = new java.util.TreeMap<>();
        for (JsonNode r : n.path("routes")) {
            if (r.path("port").isIntegralNumber() && !r.path("url").asText("").isEmpty()) {
                out.put(r.path("port").asInt(), r.path("url").asText());
            }
        }
        return Map.copyOf(out);
    }

    /**
     * A call on a path whose answer is 410 {@code sandbox_stopped}: the session stopped (its timeout
     * passed, or a stop came from elsewhere), not a missing file, which is what the path's mapping
     * would make of it. The cause is the service's answer, so {@link #status} reads 410.
     */
    private <T> T inSession(String sessionId, java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (AirlockException e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof WireFailure w && w.stage() == WireFailure.Stage.ANSWERED && w.httpStatus() == 410) {
                    if (settings.sandboxId().isPresent()) {
                        // An attached sandbox ended (its ttl ran out after the open checked it): the open's one line.
                        throw ended(settings.sandboxId().get(), "stopped", w);
                    }
                    throw new dev.airlock.EnvironmentClosedException("the Vercel sandbox session " + sessionId
                            + " has stopped (410 sandbox_stopped: its timeout passed or it was stopped elsewhere);"
                            + " open a new environment", w);
                }
            }
            throw e;
        }
    }

    /** An attached ({@code up}) sandbox whose session is {@code status}: what happened and what to do, in one line. */
    static dev.airlock.BackendUnavailableException ended(String sandboxName, String status, Throwable cause) {
        return new dev.airlock.BackendUnavailableException("the Vercel sandbox " + sandboxName + " has ended (its session is "
                + status + ": its lifetime is over, or it was stopped); make a new one"
                + " with 'airlock --backend vercel up --ttl DURATION' and attach to that", cause);
    }

    /** The HTTP status behind a mapped failure, or -1. */
    static int status(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof dev.airlock.NoSuchPathException) {
                return 404; // remote/ maps a path's 404 without its cause
            }
            if (t instanceof WireFailure w && w.stage() == WireFailure.Stage.ANSWERED) {
                return w.httpStatus();
            }
        }
        return -1;
    }

    private static void ignoring(Runnable call, int... statuses) {
        try {
            call.run();
        } catch (AirlockException e) {
            int s = status(e);
            for (int ok : statuses) {
                if (s == ok) {
                    return;
                }
            }
            throw e;
        }
    }
}
