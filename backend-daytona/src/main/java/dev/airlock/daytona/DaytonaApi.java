package dev.airlock.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.airlock.BackendException;
import dev.airlock.Payload;
import dev.airlock.remote.BearerToken;
import dev.airlock.remote.CallKind;
import dev.airlock.remote.Http;
import dev.airlock.remote.HttpClients;
import dev.airlock.remote.HttpSettings;
import dev.airlock.remote.Redactor;
import dev.airlock.remote.RemoteCalls;
import dev.airlock.remote.Resource;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.remote.Service;
import dev.airlock.remote.WireFailure;
import dev.airlock.settings.Secret;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Deadline;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Daytona's REST API as this backend uses it: every call through {@link RemoteCalls} (idempotent
 * ones retried by the one rule, a command sent once), errors mapped by {@code remote/}, the key
 * only in the Authorization header.
 */
final class DaytonaApi implements AutoCloseable {
    static final Service SERVICE = new Service("Daytona", DaytonaSettings.DAYTONA_API_KEY, DaytonaSettings.API_URL);
    static final String SDK_VERSION = "0.218.0";
    private static final MediaType JSON = MediaType.get("application/json");
    private static final MediaType OCTETS = MediaType.get("application/octet-stream");

    private final DaytonaSettings settings;
    private final OkHttpClient http;
    private final RemoteCalls calls;
    private final BearerToken token;
    private final Redactor redactor;
    private final ObjectMapper json = new ObjectMapper();

    DaytonaApi(DaytonaSettings settings, Settings raw) {
        this.settings = settings;
        this.http = HttpClients.create(HttpSettings.from(raw, DaytonaSettings.PREFIX, System.getenv()));
        this.calls = new RemoteCalls(SERVICE, RetryPolicy.from(raw, DaytonaSettings.PREFIX));
        this.token = new BearerToken(settings.apiKey());
        this.redactor = Redactor.of(settings.apiKey());
    }

    @Override
    public void close() {
        HttpClients.close(http);
    }

    // ------------------------------------------------------------------ control API

    /** Creates a sandbox; sent once (a create is not idempotent), its answer read as the record. */
    JsonNode create(ObjectNode body) {
        return calls.dispatch("sandbox create", Resource.none(),
                () -> send(control("sandbox").post(jsonBody(body)), "sandbox-create", this::readJson));
    }

    JsonNode get(String id) {
        return calls.call(CallKind.STATUS, "sandbox status", Resource.sandbox(id),
                () -> send(control("sandbox/" + id).get(), "", this::readJson));
    }

    List<JsonNode> list(Map<String, String> labels) {
        HttpUrl url = HttpUrl.get(settings.apiUrl() + "/sandbox").newBuilder()
                .addQueryParameter("labels", json.valueToTree(labels).toString()).build();
        JsonNode arr = calls.call(CallKind.READ, "sandbox list", Resource.none(),
                () -> send(authed(url).get(), "", this::readJson));
        List<JsonNode> out = new ArrayList<>();
        (arr.isArray() ? arr : arr.path("items")).forEach(out::add);
        return out;
    }

    /** Stops a sandbox: asking twice for the same stop is harmless, so it is a status-kind call. */
    void stop(String id) {
        calls.call(CallKind.STATUS, "sandbox stop", Resource.sandbox(id),
                () -> send(control("sandbox/" + id + "/stop").post(RequestBody.create(new byte[0])), "sandbox-lifecycle", r -> null));
    }

    void delete(String id) {
        calls.call(CallKind.STATUS, "sandbox delete", Resource.sandbox(id),
                () -> send(control("sandbox/" + id).delete(), "sandbox-lifecycle", r -> null));
    }

    String toolboxProxyUrl(String id) {
        return calls.call(CallKind.READ, "toolbox url", Resource.sandbox(id),
                () -> send(control("sandbox/" + id + "/toolbox-proxy-url").get(), "", this::readJson)).path("url").asText();
    }

    // ------------------------------------------------------------------ preview links

    /**
     * A signed preview URL of {@code port} ({@code GET /sandbox/{id}/ports/{port}/signed-preview-url}),
     * its token in the URL itself: {@code {url, token, port, sandboxId}}. Each call mints a new
     * token, so a resend after a lost answer only leaves an unused one to expire. The whole call,
     * retries included, ends by {@code deadline}.
     */
    JsonNode signedPreviewUrl(String id, int port, Duration expiresIn, Deadline deadline) {
        HttpUrl url = HttpUrl.get(settings.apiUrl() + "/sandbox/" + id + "/ports/" + port + "/signed-preview-url").newBuilder()
                .addQueryParameter("expiresInSeconds", Long.toString(expiresIn.toSeconds())).build();
        return calls.call(CallKind.READ, "preview link", Resource.sandbox(id), () -> {
            OkHttpClient bounded = within(deadline, "the preview link of port " + port);
            return Http.execute(bounded, authed(url).get().build(), "", redactor, this::readJson);
        });
    }

    /** Revokes a signed preview URL before its expiry; the token travels only in this request's path, never in a message. */
    void expireSignedPreviewUrl(String id, int port, Secret token, Deadline deadline) {
        Redactor withToken = Redactor.of(settings.apiKey(), token);
        HttpUrl url = HttpUrl.get(settings.apiUrl() + "/sandbox/" + id + "/ports/" + port + "/signed-preview-url").newBuilder()
                .addPathSegment(token.reveal()).addPathSegment("expire").build();
        ignore404(() -> calls.call(CallKind.STATUS, "preview link expiry", Resource.sandbox(id), () -> {
            OkHttpClient bounded = within(deadline, "the expiry of the preview link of port " + port);
            return Http.execute(bounded, authed(url).post(RequestBody.create(new byte[0])).build(), "", withToken, r -> null);
        }));
    }

    /**
     * {@link #http} with a call timeout of what is left until {@code deadline}; past it, a
     * {@link BackendException} (never retried) naming {@code what}.
     */
    private OkHttpClient within(Deadline deadline, String what) {
        Duration left = deadline.remaining();
        if (left.isZero() || left.isNegative()) {
            throw new BackendException("Daytona did not answer for " + what + " in time; try again, or check the Daytona status page");
        }
        return http.newBuilder().callTimeout(left).build();
    }

    // ------------------------------------------------------------------ snapshots

    /**
     * Starts a snapshot of the sandbox's filesystem named {@code name} ({@code POST
     * /sandbox/{id}/snapshot}); sent once, a lost answer resolved by asking for the snapshot by name.
     */
    void createSnapshot(String id, String name) {
        ObjectNode b = json.createObjectNode().put("name", name);
        calls.dispatch("sandbox snapshot", Resource.sandbox(id),
                () -> send(control("sandbox/" + id + "/snapshot").post(jsonBody(b)), "", r -> Boolean.TRUE),
                () -> snapshot(name).map(s -> Boolean.TRUE));
    }

    /** The snapshot record ({@code GET /snapshots/{idOrName}}), empty when there is none of that name. */
    Optional<JsonNode> snapshot(String idOrName) {
        try {
            return Optional.of(calls.call(CallKind.STATUS, "snapshot status", Resource.none(),
                    () -> send(authed(HttpUrl.get(settings.apiUrl() + "/snapshots").newBuilder().addPathSegment(idOrName).build())
                            .get(), "", this::readJson)));
        } catch (dev.airlock.AirlockException e) {
            if (e instanceof dev.airlock.EnvironmentClosedException || e.getCause() instanceof WireFailure w && w.httpStatus() == 404) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** Every snapshot whose name contains {@code name} ({@code GET /snapshots?name=}, page by page). */
    List<JsonNode> snapshots(String name) {
        List<JsonNode> out = new ArrayList<>();
        for (int page = 1; ; page++) {
            HttpUrl url = HttpUrl.get(settings.apiUrl() + "/snapshots").newBuilder().addQueryParameter("name", name)
                    .addQueryParameter("page", Integer.toString(page)).addQueryParameter("limit", "100").build();
            JsonNode p = calls.call(CallKind.READ, "snapshot list", Resource.none(), () -> send(authed(url).get(), "", this::readJson));
            p.path("items").forEach(out::add);
            if (page >= p.path("totalPages").asInt(1) || p.path("items").isEmpty()) {
                return out;
            }
        }
    }

    /** Deletes a snapshot by name (the service deletes by id: it is looked up first); one already gone is fine. */
    void deleteSnapshot(String name) {
        Optional<JsonNode> s = snapshot(name);
        if (s.isEmpty()) {
            return;
        }
        String snapshotId = s.get().path("id").asText(name);
        ignore404(() -> calls.call(CallKind.STATUS, "snapshot delete", Resource.none(),
                () -> send(authed(HttpUrl.get(settings.apiUrl() + "/snapshots").newBuilder().addPathSegment(snapshotId).build())
                        .delete(), "", r -> null)));
    }

    // ------------------------------------------------------------------ toolbox

    /** The toolbox of one sandbox: {@code {toolboxProxyUrl}/{id}/...}. */
    final class Toolbox {
        private final String sandbox;
        private final String base;

        Toolbox(String sandbox, String proxyUrl) {
            this.sandbox = sandbox;
            this.base = (proxyUrl.endsWith("/") ? proxyUrl : proxyUrl + "/") + sandbox;
        }

        private HttpUrl.Builder url(String path) {
            return HttpUrl.get(base + path).newBuilder();
        }

        void createSession(String sessionId) {
            ObjectNode b = json.createObjectNode().put("sessionId", sessionId);
            try {
                calls.call(CallKind.UPLOAD_PART, "session create", Resource.sandbox(sandbox),
                        () -> send(authed(url("/process/session").build()).post(jsonBody(b)), "", r -> null));
            } catch (dev.airlock.AirlockException e) {
                // A resent create whose first answer was lost finds its own session: 409 is success here.
                if (!(e.getCause() instanceof WireFailure w && w.httpStatus() == 409)) {
                    throw e;
                }
            }
        }

        /** Starts {@code command} in the session; a lost answer is resolved from the session's command list, never by resending. */
        String execAsync(String sessionId, String command) {
            ObjectNode b = json.createObjectNode().put("command", command).put("runAsync", true).put("async", true);
            return calls.dispatch("command", Resource.sandbox(sandbox),
                    () -> send(authed(url("/process/session/" + sessionId + "/exec").build()).post(jsonBody(b)), "",
                            r -> readJson(r).path("cmdId").asText()),
                    () -> {
                        JsonNode cmds = session(sessionId).path("commands");
                        return cmds.size() > 0 ? Optional.of(cmds.get(0).path("id").asText()) : Optional.empty();
                    });
        }

        JsonNode session(String sessionId) {
            return calls.call(CallKind.STATUS, "session status", Resource.sandbox(sandbox),
                    () -> send(authed(url("/process/session/" + sessionId).build()).get(), "", DaytonaApi.this::readJson));
        }

        /**
         * The command's exit code, or empty while it runs; empty too when the session is gone
         * (killed). While the sandbox is {@code snapshotting} its toolbox refuses (409) but the
         * command runs on: that reads as still running, and so does a 409 whose sandbox is
         * {@code started} by the time we ask (the snapshot ended between the two calls; the
         * next poll reads the command).
         */
        Optional<Optional<Integer>> commandStatus(String sessionId, String cmdId) {
            try {
                JsonNode c = calls.call(CallKind.STATUS, "command status", Resource.none(),
                        () -> send(authed(url("/process/session/" + sessionId + "/command/" + cmdId).build()).get(), "",
                                DaytonaApi.this::readJson));
                return Optional.of(c.hasNonNull("exitCode") ? Optional.of(c.get("exitCode").asInt()) : Optional.empty());
            } catch (dev.airlock.AirlockException e) {
                if (e.getCause() instanceof WireFailure w && w.httpStatus() == 404) {
                    return Optional.empty();
                }
                if (e.getCause() instanceof WireFailure w && w.httpStatus() == 409 && toolboxComesBack()) {
                    return Optional.of(Optional.empty());
                }
                throw e;
            }
        }

        /** Whether the sandbox is taking a snapshot now or has just finished one: its toolbox is back, or soon. */
        boolean toolboxComesBack() {
            String state = get(sandbox).path("state").asText("");
            return state.equals("snapshotting") || state.equals("started");
        }

        /** Deletes a session, killing its command's process group; a session already gone is fine. */
        void deleteSession(String sessionId) {
            ignore404(() -> calls.call(CallKind.STATUS, "session delete", Resource.none(),
                    () -> send(authed(url("/process/session/" + sessionId).build()).delete(), "", r -> null)));
        }

        void mkdir(String path, int mode) {
            calls.call(CallKind.UPLOAD_PART, "folder", Resource.path(path),
                    () -> send(authed(url("/files/folder").addQueryParameter("path", path)
                            .addQueryParameter("mode", Integer.toOctalString(mode)).build())
                            .post(RequestBody.create(new byte[0])), "", r -> null));
        }

        void chmod(String path, int mode) {
            calls.call(CallKind.UPLOAD_PART, "permissions", Resource.path(path),
                    () -> send(authed(url("/files/permissions").addQueryParameter("path", path)
                            .addQueryParameter("mode", Integer.toOctalString(mode)).build())
                            .post(RequestBody.create(new byte[0])), "", r -> null));
        }

        /** Uploads a whole file (streamed); retried only when the payload can be read again. */
        void upload(String path, Payload data) {
            AtomicBoolean sent = new AtomicBoolean();
            java.util.concurrent.atomic.AtomicReference<IOException> source = new java.util.concurrent.atomic.AtomicReference<>();
            try {
                calls.call(CallKind.UPLOAD_PART, "upload", Resource.path(path), () -> {
                    if (source.get() != null) {
                        throw new BackendException(source.get().getMessage(), source.get()); // the caller's input broke: no resend
                    }
                    if (sent.getAndSet(true) && !data.isRepeatable()) {
                        throw new BackendException("the upload of " + path + " failed and its input is a stream that cannot be read again");
                    }
                    return send(authed(url("/files/upload-v2").addQueryParameter("path", path).build())
                            .post(streamed(data, source)), "", r -> null);
                });
            } catch (RuntimeException e) {
                if (source.get() != null) {
                    throw new BackendException(source.get().getMessage(), source.get());
                }
                throw e;
            }
        }

        /**
         * Streams a file to {@code sink}; a 404 is an empty answer. An IOException out of the sink is
         * the body breaking off (a cut connection: OkHttp's framing tells it from the end): that is a
         * lost answer, so the download is made again under the retry rule, and the sink, called again
         * with the whole file, resumes by skipping what it already has (the toolbox has no ranges).
         */
        boolean download(String path, BodySink sink) {
            try {
                calls.call(CallKind.READ, "download", Resource.path(path),
                        () -> send(authed(url("/files/download").addQueryParameter("path", path).build()).get(), "", r -> {
                            sink.accept(r.body().byteStream());
                            return null;
                        }));
                return true;
            } catch (dev.airlock.NoSuchPathException e) {
                return false;
            }
        }

        /** Opens a file for reading; the caller closes the stream (and with it the response). */
        InputStream open(String path) {
            return calls.call(CallKind.READ, "download", Resource.path(path), () -> {
                Response r;
                try {
                    r = http.newCall(authed(url("/files/download").addQueryParameter("path", path).build()).get().build()).execute();
                } catch (IOException e) {
                    throw WireFailure.notSent(e);
                }
                if (!r.isSuccessful()) {
                    r.close();
                    throw WireFailure.http(r.code(), "download of a file", Optional.empty());
                }
                return r.body().byteStream();
            });
        }

        void deleteTree(String path) {
            ignore404(() -> calls.call(CallKind.STATUS, "file delete", Resource.none(),
                    () -> send(authed(url("/files").addQueryParameter("path", path).addQueryParameter("recursive", "true")
                            .build()).delete(), "", r -> null)));
        }

        void deleteFile(String path) {
            ignore404(() -> calls.call(CallKind.STATUS, "file delete", Resource.none(),
                    () -> send(authed(url("/files").addQueryParameter("path", path).build()).delete(), "", r -> null)));
        }
    }

    /**
     * Takes a download's body. Throws IOException only when reading the body failed (then the
     * download is retried); its own failures (a full local disk) go out unchecked, never retried.
     */
    @FunctionalInterface
    interface BodySink {
        void accept(InputStream body) throws IOException;
    }

    Toolbox toolbox(String sandboxId, String proxyUrl) {
        return new Toolbox(sandboxId, proxyUrl);
    }

    // ------------------------------------------------------------------ plumbing

    private Request.Builder control(String path) {
        return authed(HttpUrl.get(settings.apiUrl() + "/" + path));
    }

    private Request.Builder authed(HttpUrl url) {
        return token.apply(new Request.Builder().url(url)).header("X-Daytona-SDK-Version", SDK_VERSION)
                .header("X-Daytona-Source", "airlock");
    }

    private <T> T send(Request.Builder b, String bucket, Http.BodyReader<T> reader) {
        return Http.execute(http, b.build(), bucket, redactor, reader);
    }

    private JsonNode readJson(Response r) throws IOException {
        try (InputStream in = r.body().byteStream()) {
            JsonNode n = json.readTree(in);
            return n == null ? json.createObjectNode() : n;
        }
    }

    private RequestBody jsonBody(JsonNode n) {
        return RequestBody.create(n.toString(), JSON);
    }

    private static RequestBody streamed(Payload data, java.util.concurrent.atomic.AtomicReference<IOException> source) {
        return new RequestBody() {
            @Override
            public MediaType contentType() {
                return OCTETS;
            }

            @Override
            public long contentLength() {
                return data.length().orElse(-1);
            }

            @Override
            public void writeTo(BufferedSink sink) throws IOException {
                try (InputStream in = data.open()) {
                    byte[] buf = new byte[64 * 1024];
                    int n;
                    while (true) {
                        try {
                            n = in.read(buf);
                        } catch (IOException e) {
                            source.set(e); // the caller's stream, not the network
                            throw e;
                        }
                        if (n < 0) {
                            break;
                        }
                        sink.write(buf, 0, n);
                    }
                }
            }
        };
    }

    private static void ignore404(Runnable r) {
        try {
            r.run();
        } catch (dev.airlock.EnvironmentClosedException | dev.airlock.NoSuchPathException e) {
            // already gone: the goal of a delete
        } catch (dev.airlock.AirlockException e) {
            if (!(e.getCause() instanceof WireFailure w && w.httpStatus() == 404)) {
                throw e;
            }
        }
    }

    ObjectMapper json() {
        return json;
    }
}
