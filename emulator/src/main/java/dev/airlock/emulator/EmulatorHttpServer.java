package dev.airlock.emulator;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A loopback HTTP server for REST emulators (Daytona, Vercel) on the JDK's own
 * {@code com.sun.net.httpserver}: no dependency, HTTP/1.1 with chunked streams, which is what
 * those SDKs speak. Each route names its call; the server asks the {@link FaultPlan} before the
 * handler runs, applies the fault, checks the credentials with the emulator's
 * {@link Authenticator} (by default any non-empty bearer token passes) and records every request in the {@link CallJournal}.
 *
 * <p>Faults: a {@link Fault.Status} answers at once (the work is not done) with the service's
 * error shape and its Retry-After header; a {@link Fault.Delay} waits first; a
 * {@link Fault.LoseResponse} lets the handler do the work, then drops the connection before any
 * byte of the answer; {@link Fault.CutAfterBytes}, {@link Fault.CutAfterLines} and
 * {@link Fault.CutAfterTime} send that much of the answer and drop the connection.
 */
public final class EmulatorHttpServer implements AutoCloseable {

    /**
     * The JDK server's switch for {@code TCP_NODELAY} on accepted connections, off by default and
     * read once per JVM, when the first server starts. With Nagle on, an answer written in more
     * than one piece (headers, then the body) waits for the client's delayed ACK, about 40 ms on
     * Linux, on every call: a backend that makes several calls per exec paid that each time, which
     * the services themselves do not charge. Set before the first server, unless the JVM's owner
     * chose otherwise.
     */
    static final String NODELAY = "sun.net.httpserver.nodelay";

    static {
        if (System.getProperty(NODELAY) == null) {
            System.setProperty(NODELAY, "true");
        }
    }

    /** Handles one request of a route. */
    @FunctionalInterface
    public interface Handler {
        void handle(Request request, Response response) throws IOException;
    }

    /** The service's error body for a status, a machine code and a message. */
    @FunctionalInterface
    public interface ErrorBody {
        String json(int status, String code, String message);
    }

    /**
     * Decides whether a request's credentials let it in, before its handler and any injected
     * status fault. A refusal is answered as is: the status and the service's own error body.
     */
    @FunctionalInterface
    public interface Authenticator {
        /** Empty to let the request in; else how the service refuses it. */
        Optional<Refusal> check(Request request);
    }

    /** A refused request's answer: the HTTP status and the whole JSON body the service sends. */
    public record Refusal(int status, String json) {
    }

    /** Vercel's shape; Daytona supplies its own. */
    public static final ErrorBody NESTED_ERROR = (status, code, message) ->
            "{\"error\":{\"code\":" + Jsons.quote(code) + ",\"message\":" + Jsons.quote(message) + "}}";

    private record Route(String method, Pattern path, List<String> params, String call, boolean open, Handler handler) {
    }

    /** Requests addressed to other hosts (a sandbox's public port domain): any method and path, no token. */
    private record HostRoute(Predicate<String> host, String call, Handler handler) {
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final List<Route> routes;
    private final List<HostRoute> hostRoutes;
    private final FaultPlan faults;
    private final CallJournal journal;
    private final ErrorBody errors;
    private final Function<String, String> retryAfterHeader;
    private final Authenticator auth;
    private final RateLimits rateLimits;

    private EmulatorHttpServer(Builder b, InetSocketAddress listen) throws IOException {
        this.routes = List.copyOf(b.routes);
        this.hostRoutes = List.copyOf(b.hostRoutes);
        ErrorBody errorBody = b.errors;
        this.auth = b.auth != null ? b.auth : req -> req.bearer().isPresent() ? Optional.empty()
                : Optional.of(new Refusal(401, errorBody.json(401, "unauthorized", "missing or empty bearer token")));
        this.faults = b.faults;
        this.journal = b.journal;
        this.errors = b.errors;
        this.retryAfterHeader = b.retryAfterHeader;
        this.rateLimits = b.rateLimits;
        AtomicInteger n = new AtomicInteger();
        // Unbounded on purpose: a log stream or a blocking wait holds its thread for as long as a command runs.
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "emulator-http-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.server = HttpServer.create(listen, 64);
        server.setExecutor(executor);
        server.createContext("/", this::serve);
        server.start();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code http://HOST:PORT} as a client is configured with. */
    public URI url() {
        InetSocketAddress a = server.getAddress();
        String host = a.getAddress().getHostAddress();
        return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort());
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    private void serve(HttpExchange ex) throws IOException {
        String method = ex.getRequestMethod();
        String path = ex.getRequestURI().getRawPath();
        String host = hostName(ex.getRequestHeaders().getFirst("Host"));
        for (HostRoute h : hostRoutes) {
            if (h.host.test(host)) {
                handle(new Route(method, null, List.of(), h.call, true, h.handler), Map.of("host", host), ex);
                return;
            }
        }
        for (Route r : routes) {
            Matcher m = r.path.matcher(path);
            if (r.method.equals(method) && m.matches()) {
                Map<String, String> params = new LinkedHashMap<>();
                for (int i = 0; i < r.params.size(); i++) {
                    params.put(r.params.get(i), URLDecoder.decode(m.group(i + 1), StandardCharsets.UTF_8));
                }
                handle(r, params, ex);
                return;
            }
        }
        CountingInputStream in = new CountingInputStream(ex.getRequestBody());
        in.transferTo(OutputStream.nullOutputStream());
        Response resp = new Response(ex, Optional.empty(), errors,
                declared -> journal.call("unknown", "", in.count, declared, Optional.empty()));
        resp.error(404, "not_found", "no route for " + method + " " + path);
        ex.close();
    }

    /** The host of a Host header, lower case, without its port ("" when absent). */
    static String hostName(String header) {
        if (header == null) {
            return "";
        }
        String h = header.strip().toLowerCase(java.util.Locale.ROOT);
        if (h.startsWith("[")) {
            int end = h.indexOf(']');
            return end < 0 ? h : h.substring(0, end + 1);
        }
        int colon = h.indexOf(':');
        return colon < 0 ? h : h.substring(0, colon);
    }

    private void handle(Route r, Map<String, String> params, HttpExchange ex) throws IOException {
        Optional<Fault> fault = faults.next(r.call);
        CountingInputStream in = new CountingInputStream(ex.getRequestBody());
        Request req = new Request(ex, r.call, params, in, fault);
        String sandbox = params.getOrDefault("sandbox", params.getOrDefault("id", ""));
        // Journalled as the answer starts, before its first byte leaves: a client that has its
        // answer finds the call in the journal (recorded after the answer, a fast client could
        // look before it was there). A call that never answers is journalled at its end.
        AtomicBoolean journalled = new AtomicBoolean();
        LongConsumer record = declared -> {
            if (journalled.compareAndSet(false, true)) {
                journal.call(r.call, sandbox, in.count, declared, fault);
            }
        };
        Response resp = new Response(ex, fault, errors, record);
        boolean dropped = false;
        try {
            if (!r.open) {
                Optional<Refusal> refused = auth.check(req);
                if (refused.isPresent()) {
                    resp.json(refused.get().status(), refused.get().json());
                    return;
                }
            }
            if (!r.open && rateLimits != null && limited(rateLimits.acquire(r.call), r.call, resp)) {
                return;
            }
            if (fault.isPresent() && fault.get() instanceof Fault.Status s) {
                s.retryAfter().ifPresent(d -> resp.header(retryAfterHeader.apply(r.call), seconds(d)));
                resp.error(s.httpStatus(), "emulated_fault", "emulated " + s.httpStatus() + " for " + r.call);
                return;
            }
            if (fault.isPresent() && fault.get() instanceof Fault.Delay d) {
                sleep(d.delay());
            }
            r.handler.handle(req, resp);
            if (resp.losing()) {
                throw new Dropped(); // the work is done; the answer never leaves
            }
        } catch (Dropped d) {
            dropped = true;
            throw d; // not ex.close(): that would end a chunked body cleanly, and the cut must look like one
        } catch (IOException | RuntimeException e) {
            // A handler's own failure is an answer (500 with the reason), never a silent drop: only faults drop.
            if (resp.headersSent || resp.losing()) {
                dropped = true;
                throw e;
            }
            resp.error(500, "emulator_error", r.call + " failed in the emulator: " + e);
        } finally {
            record.accept(-1);
            if (!dropped) {
                ex.close();
            }
        }
    }

    /**
     * Sends the bucket's {@code X-RateLimit-Limit/Remaining/Reset-<bucket>} headers; over the
     * limit, answers 429 with the Retry-After header (the emulator's name for it) and says so.
     */
    private boolean limited(Optional<RateLimits.Decision> decision, String call, Response resp) throws IOException {
        if (decision.isEmpty()) {
            return false;
        }
        RateLimits.Decision d = decision.get();
        resp.header("X-RateLimit-Limit-" + d.bucket(), String.valueOf(d.limit().requests()));
        resp.header("X-RateLimit-Remaining-" + d.bucket(), String.valueOf(d.remaining()));
        resp.header("X-RateLimit-Reset-" + d.bucket(), seconds(d.reset()));
        if (d.allowed()) {
            return false;
        }
        resp.header(retryAfterHeader.apply(call), seconds(d.reset()));
        resp.error(429, "TOO_MANY_REQUESTS", "ThrottlerException: Too Many Requests");
        return true;
    }

    private static String seconds(Duration d) {
        return String.valueOf(Math.max(0, (d.toMillis() + 999) / 1000));
    }

    private static void sleep(Duration d) throws IOException {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /**
     * Thrown out of a handler to drop the connection: the JDK server closes a connection whose
     * handler failed, without finishing the response, which is exactly a lost or cut answer.
     */
    static final class Dropped extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Dropped() {
            super("connection dropped by a fault", null, false, false);
        }
    }

    /** One request: its call name, path parameters, query, headers and body (streamed). */
    public static final class Request {
        private final HttpExchange ex;
        private final String call;
        private final Map<String, String> params;
        private final CountingInputStream body;
        private final Optional<Fault> fault;

        Request(HttpExchange ex, String call, Map<String, String> params, CountingInputStream body, Optional<Fault> fault) {
            this.ex = ex;
            this.call = call;
            this.params = Map.copyOf(params);
            this.body = body;
            this.fault = fault;
        }

        public String call() {
            return call;
        }

        public String method() {
            return ex.getRequestMethod();
        }

        /** The request's path, as sent (not decoded). */
        public String path() {
            return ex.getRequestURI().getRawPath();
        }

        /** A path parameter: {@code {id}} in the route. */
        public String param(String name) {
            String v = params.get(name);
            if (v == null) {
                throw new IllegalArgumentException("no path parameter " + name);
            }
            return v;
        }

        public Optional<String> query(String name) {
            String raw = ex.getRequestURI().getRawQuery();
            if (raw == null) {
                return Optional.empty();
            }
            for (String kv : raw.split("&")) {
                int eq = kv.indexOf('=');
                String k = URLDecoder.decode(eq < 0 ? kv : kv.substring(0, eq), StandardCharsets.UTF_8);
                if (k.equals(name)) {
                    return Optional.of(eq < 0 ? "" : URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
            return Optional.empty();
        }

        public Optional<String> header(String name) {
            return Optional.ofNullable(ex.getRequestHeaders().getFirst(name));
        }

        /** Every header as sent, names as the JDK normalises them (first letter upper case). */
        public Map<String, List<String>> headers() {
            Map<String, List<String>> all = new LinkedHashMap<>();
            ex.getRequestHeaders().forEach((k, v) -> all.put(k, List.copyOf(v)));
            return all;
        }

        /** The path with its query, as sent (a proxy forwards it unchanged). */
        public String target() {
            String q = ex.getRequestURI().getRawQuery();
            return path() + (q == null ? "" : "?" + q);
        }

        /** The bearer token, when the request carries a non-empty one. */
        public Optional<String> bearer() {
            return header("Authorization").filter(h -> h.regionMatches(true, 0, "Bearer ", 0, 7))
                    .map(h -> h.substring(7).trim()).filter(t -> !t.isEmpty());
        }

        public InputStream body() {
            return body;
        }

        /** The whole body, refused past {@code max} bytes. */
        public byte[] bodyBytes(int max) throws IOException {
            byte[] b = body.readNBytes(max + 1);
            if (b.length > max) {
                throw new IOException("request body over " + max + " bytes");
            }
            return b;
        }

        public long bodyBytesRead() {
            return body.count;
        }

        /** The fault this request got (dispatch handlers pass it to the journal). */
        public Optional<Fault> fault() {
            return fault;
        }
    }

    /** The answer; honours cut and lose faults transparently. */
    public static final class Response {
        private final HttpExchange ex;
        private final Optional<Fault> fault;
        private final ErrorBody errors;
        /** Told the answer's declared length (-1: streamed or none) just before it starts. */
        private final LongConsumer onStart;
        private CuttingOutputStream out;
        private boolean headersSent;

        Response(HttpExchange ex, Optional<Fault> fault, ErrorBody errors, LongConsumer onStart) {
            this.ex = ex;
            this.fault = fault;
            this.errors = errors;
            this.onStart = onStart;
        }

        boolean losing() {
            return fault.isPresent() && fault.get() instanceof Fault.LoseResponse;
        }

        public Response header(String name, String value) {
            ex.getResponseHeaders().add(name, value);
            return this;
        }

        public void json(int status, String json) throws IOException {
            bytes(status, "application/json", json.getBytes(StandardCharsets.UTF_8));
        }

        public void bytes(int status, String contentType, byte[] body) throws IOException {
            OutputStream o = start(status, contentType, body.length);
            o.write(body);
            o.close(); // not in a finally: after a cut, closing would finish the body
        }

        public void error(int status, String code, String message) throws IOException {
            json(status, errors.json(status, code, message));
        }

        /** No body ({@code 204} and the like). */
        public void empty(int status) throws IOException {
            start(status, null, -1).close();
        }

        /** A streamed body of unknown length (chunked): NDJSON, logs, downloads. */
        public OutputStream stream(int status, String contentType) throws IOException {
            return start(status, contentType, 0);
        }

        private OutputStream start(int status, String contentType, long length) throws IOException {
            if (headersSent) {
                throw new IllegalStateException("the response was already started");
            }
            headersSent = true;
            onStart.accept(length > 0 ? length : -1);
            if (losing()) {
                out = new CuttingOutputStream(OutputStream.nullOutputStream(), Long.MAX_VALUE, Long.MAX_VALUE);
                return out;
            }
            if (contentType != null) {
                ex.getResponseHeaders().set("Content-Type", contentType);
            }
            ex.sendResponseHeaders(status, length == 0 ? 0 : length < 0 ? -1 : length);
            long bytes = fault.filter(f -> f instanceof Fault.CutAfterBytes).map(f -> ((Fault.CutAfterBytes) f).bytes())
                    .orElse(Long.MAX_VALUE);
            long lines = fault.filter(f -> f instanceof Fault.CutAfterLines).map(f -> ((Fault.CutAfterLines) f).lines())
                    .orElse(Long.MAX_VALUE);
            out = new CuttingOutputStream(ex.getResponseBody(), bytes, lines);
            fault.filter(f -> f instanceof Fault.CutAfterTime).ifPresent(f -> out.cutAt(((Fault.CutAfterTime) f).after()));
            return out;
        }
    }

    /** Passes bytes until a byte, line or time budget is spent, then flushes and drops the connection. */
    static final class CuttingOutputStream extends OutputStream {
        private final OutputStream out;
        private final long maxBytes;
        private final long maxLines;
        long count;
        private long lines;
        private boolean dropped;
        /** {@link System#nanoTime()} past which the next write cuts; none by default. */
        private long cutAtNanos;
        private boolean timed;

        CuttingOutputStream(OutputStream out, long maxBytes, long maxLines) {
            this.out = out;
            this.maxBytes = maxBytes;
            this.maxLines = maxLines;
        }

        /** Cuts at the first write once {@code after} has passed from now. */
        void cutAt(java.time.Duration after) {
            timed = true;
            cutAtNanos = System.nanoTime() + after.toNanos();
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (timed && len > 0 && System.nanoTime() - cutAtNanos >= 0) {
                throw drop();
            }
            for (int i = 0; i < len; i++) {
                if (count >= maxBytes || lines >= maxLines) {
                    throw drop();
                }
                out.write(b[off + i]);
                count++;
                if (b[off + i] == '\n') {
                    lines++;
                }
            }
            if (count >= maxBytes || lines >= maxLines) {
                throw drop();
            }
        }

        private Dropped drop() throws IOException {
            out.flush(); // what was allowed through must reach the client before the connection goes
            dropped = true;
            return new Dropped();
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }

        @Override
        public void close() throws IOException {
            if (!dropped) { // a handler's try-with-resources must not finish a cut body
                out.close();
            }
        }
    }

    static final class CountingInputStream extends FilterInputStream {
        long count;

        CountingInputStream(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count++;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                count += n;
            }
            return n;
        }
    }

    /** Routes and how errors look; {@link #start} binds the server. */
    public static final class Builder {
        private final List<Route> routes = new ArrayList<>();
        private final List<HostRoute> hostRoutes = new ArrayList<>();
        private FaultPlan faults = FaultPlan.none();
        private CallJournal journal = new CallJournal();
        private ErrorBody errors = NESTED_ERROR;
        private Function<String, String> retryAfterHeader = call -> "Retry-After";
        private Authenticator auth;
        private RateLimits rateLimits;

        /**
         * Adds a route. {@code pattern} is a path with {@code {name}} parameters
         * ({@code /sandbox/{id}/stop}); {@code call} names it for faults and the journal.
         */
        public Builder route(String method, String pattern, String call, Handler handler) {
            return add(method, pattern, call, false, handler);
        }

        /** A route that needs no token (a health check, a websocket probe answered 404). */
        public Builder openRoute(String method, String pattern, String call, Handler handler) {
            return add(method, pattern, call, true, handler);
        }

        /**
         * Serves every request whose Host (without port) {@code host} accepts with {@code handler},
         * whatever its method and path, without asking for credentials: the public domains of a
         * sandbox's ports, which the service serves with no token.
         */
        public Builder hostRoute(Predicate<String> host, String call, Handler handler) {
            hostRoutes.add(new HostRoute(Objects.requireNonNull(host), call, Objects.requireNonNull(handler)));
            return this;
        }

        private Builder add(String method, String pattern, String call, boolean open, Handler handler) {
            List<String> names = new ArrayList<>();
            Matcher m = Pattern.compile("\\{([A-Za-z][A-Za-z0-9]*)}").matcher(pattern);
            StringBuilder re = new StringBuilder();
            int last = 0;
            while (m.find()) {
                re.append(Pattern.quote(pattern.substring(last, m.start()))).append("([^/]+)");
                names.add(m.group(1));
                last = m.end();
            }
            re.append(Pattern.quote(pattern.substring(last)));
            routes.add(new Route(method, Pattern.compile(re.toString()), names, call, open, Objects.requireNonNull(handler)));
            return this;
        }

        public Builder faults(FaultPlan f) {
            this.faults = Objects.requireNonNull(f);
            return this;
        }

        public Builder journal(CallJournal j) {
            this.journal = Objects.requireNonNull(j);
            return this;
        }

        public Builder errors(ErrorBody e) {
            this.errors = Objects.requireNonNull(e);
            return this;
        }

        /** How requests on routes that need credentials are checked (default: any non-empty bearer token). */
        public Builder auth(Authenticator a) {
            this.auth = Objects.requireNonNull(a);
            return this;
        }

        /** The service's rate limits, checked on every route that needs credentials once they passed. */
        public Builder rateLimits(RateLimits r) {
            this.rateLimits = Objects.requireNonNull(r);
            return this;
        }

        /** The Retry-After header name per call: Daytona's {@code call -> "Retry-After-" + bucket}. */
        public Builder retryAfterHeader(Function<String, String> f) {
            this.retryAfterHeader = Objects.requireNonNull(f);
            return this;
        }

        public EmulatorHttpServer start(InetSocketAddress listen) throws IOException {
            return new EmulatorHttpServer(this, listen);
        }
    }
}
