package dev.airlock.cli;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * MCP over stdio: newline-delimited JSON-RPC on our stdin and stdout. Written here rather than
 * taken from the SDK because the SDK (2.1.0) ignores {@code notifications/cancelled} and gives a
 * tool handler no way to learn its request id: this transport stamps every request with its id
 * (in the transport context, {@link #REQUEST_ID}), routes cancellations to {@code onCancel}, and
 * sends no response for a cancelled request, as the protocol asks.
 */
final class McpStdioTransport implements McpServerTransportProvider {
    /** The transport-context key under which a request's JSON-RPC id reaches its handler. */
    static final String REQUEST_ID = "airlock.request-id";
    private static final String CANCELLED = "notifications/cancelled";
    /** A message longer than this is refused (a 48 MiB write_file in base64 fits). */
    static final int MAX_LINE_BYTES = 64 * 1024 * 1024;
    /**
     * Messages at least this long count against {@link #budget} while they are handled; smaller
     * ones (pings, cancellations, short commands) take none of it.
     */
    static final int LARGE_MESSAGE_BYTES = 1024 * 1024;

    private static final Logger log = LoggerFactory.getLogger(McpStdioTransport.class);

    private final McpJsonMapper json;
    private final InputStream in;
    private final OutputStream out;
    private final Consumer<Object> onCancel;
    private final Consumer<Object> onAnswered;
    /** Requests read and not yet answered, by id: their method. */
    private final Map<Object, String> inFlight = new ConcurrentHashMap<>();
    private final Set<Object> cancelled = ConcurrentHashMap.newKeySet();
    /** The tool each tools/call in flight names, for an error about an unknown one. */
    private final Map<Object, String> toolNames = new ConcurrentHashMap<>();
    private final int maxLineBytes;
    /**
     * Bytes of large messages being handled at once: each one is held several times over while it
     * is parsed and decoded (text, JSON tree, decoded content), so without a bound a client sending
     * many big write_file calls in a row would exhaust the heap. Reading waits for room (back-pressure
     * on the client's pipe) until a large message in hand is answered; each is bounded by its own
     * timeout, and the largest message always fits on its own.
     */
    private final Semaphore budget;
    private final int budgetBytes;
    private volatile McpServerSession session;
    private volatile boolean closing;

    /**
     * @param onCancel   the id of a {@code tools/call} in flight that the client cancelled
     * @param onAnswered the id of a request whose answer went out (or was dropped after a cancel)
     */
    McpStdioTransport(McpJsonMapper json, InputStream in, OutputStream out, Consumer<Object> onCancel,
                      Consumer<Object> onAnswered) {
        this(json, in, out, onCancel, onAnswered, MAX_LINE_BYTES, MAX_LINE_BYTES);
    }

    McpStdioTransport(McpJsonMapper json, InputStream in, OutputStream out, Consumer<Object> onCancel,
                      Consumer<Object> onAnswered, int maxLineBytes) {
        this(json, in, out, onCancel, onAnswered, maxLineBytes, maxLineBytes);
    }

    /** @param budgetBytes how many bytes of large messages may be handled at once (at least {@code maxLineBytes}) */
    McpStdioTransport(McpJsonMapper json, InputStream in, OutputStream out, Consumer<Object> onCancel,
                      Consumer<Object> onAnswered, int maxLineBytes, int budgetBytes) {
        this.maxLineBytes = maxLineBytes;
        this.budgetBytes = Math.max(budgetBytes, maxLineBytes);
        this.budget = new Semaphore(this.budgetBytes);
        this.json = json;
        this.in = in;
        this.out = out;
        this.onCancel = onCancel;
        this.onAnswered = onAnswered;
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory factory) {
        this.session = factory.create(new Transport());
    }

    /** Reads and dispatches messages until stdin ends; handlers run concurrently on the SDK's schedulers. */
    void run() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        byte[] buf = new byte[64 * 1024];
        Oversized skipped = null;
        int n;
        while (!closing && (n = in.read(buf)) >= 0) {
            int start = 0;
            for (int i = 0; i <= n; i++) {
                boolean end = i < n && buf[i] == '\n';
                if (!end && i < n) {
                    continue;
                }
                if (skipped != null) {
                    skipped.tail(buf, start, i - start);
                } else {
                    line.write(buf, start, i - start);
                    if (line.size() > maxLineBytes) {
                        skipped = new Oversized(line.toByteArray());
                        line.reset();
                    }
                }
                if (end) {
                    if (skipped != null) {
                        refuse(skipped);
                        skipped = null;
                    } else {
                        dispatch(line.toString(StandardCharsets.UTF_8));
                    }
                    line.reset();
                }
                start = i + 1;
            }
        }
        if (skipped != null) {
            refuse(skipped);
        } else if (line.size() > 0) {
            dispatch(line.toString(StandardCharsets.UTF_8));
        }
    }

    /** A message over the size limit is not parsed; if its id can be found, the client gets an error instead of silence. */
    private void refuse(Oversized m) {
        Object id = m.id(json);
        log.warn("skipped a message longer than {} bytes{}", maxLineBytes, id == null ? "" : " (request " + id + ")");
        if (id != null) {
            new Transport().write(McpSchema.JSONRPCResponse.error(id, new McpSchema.JSONRPCResponse.JSONRPCError(
                    McpSchema.ErrorCodes.INVALID_REQUEST, "message too large: over " + maxLineBytes
                    + " bytes; send large files in parts (write_file a part, then exec to join them)")));
        }
    }

    /** The first and last bytes of a skipped message: where a JSON-RPC id sits, first or last. */
    private static final class Oversized {
        private static final int KEEP = 512;
        private static final Pattern ID_FIRST = Pattern.compile(
                "^\\s*\\{\\s*(?:\"jsonrpc\"\\s*:\\s*\"2\\.0\"\\s*,\\s*)?\"id\"\\s*:\\s*(-?\\d+|\"(?:[^\"\\\\]|\\\\.)*\")");
        private static final Pattern ID_LAST = Pattern.compile(
                "[{,]\\s*\"id\"\\s*:\\s*(-?\\d+|\"(?:[^\"\\\\]|\\\\.)*\")\\s*}\\s*$");
        private final String head;
        private byte[] tail = new byte[0];

        Oversized(byte[] start) {
            this.head = new String(start, 0, Math.min(KEEP, start.length), StandardCharsets.UTF_8);
            tail(start, 0, start.length);
        }

        void tail(byte[] b, int off, int len) {
            int keep = Math.min(KEEP, tail.length + len);
            byte[] t = new byte[keep];
            int fromNew = Math.min(len, keep);
            int fromOld = keep - fromNew;
            System.arraycopy(tail, tail.length - fromOld, t, 0, fromOld);
            System.arraycopy(b, off + len - fromNew, t, fromOld, fromNew);
            tail = t;
        }

        Object id(McpJsonMapper json) {
            Matcher m = ID_FIRST.matcher(head);
            if (!m.find()) {
                m = ID_LAST.matcher(new String(tail, StandardCharsets.UTF_8).stripTrailing());
                if (!m.find()) {
                    return null;
                }
            }
            try {
                return json.readValue(m.group(1), Object.class);
            } catch (IOException e) {
                return null;
            }
        }
    }

    private void dispatch(String text) {
        int held = text.length() >= LARGE_MESSAGE_BYTES ? Math.min(text.length(), budgetBytes) : 0;
        if (held > 0) {
            budget.acquireUninterruptibly(held); // released when its handling ends, answered or not
        }
        boolean handedOver = false;
        try {
            handedOver = dispatch(text, held);
        } finally {
            if (!handedOver && held > 0) {
                budget.release(held);
            }
        }
    }

    /** Returns whether the message went to the session, which then releases {@code held} when it is handled. */
    private boolean dispatch(String text, int held) {
        String line = text.strip();
        if (line.isEmpty()) {
            return false;
        }
        McpSchema.JSONRPCMessage message;
        try {
            message = McpSchema.deserializeJsonRpcMessage(json, line);
        } catch (IOException | RuntimeException e) {
            log.warn("skipping a line that is not a JSON-RPC message: {}", e.getMessage());
            return false;
        }
        McpServerSession s = session;
        if (message instanceof McpSchema.JSONRPCNotification note && CANCELLED.equals(note.method())) {
            Object id = note.params() instanceof Map<?, ?> p ? p.get("requestId") : null;
            // Only a request still in flight: an id may be reused once its request was answered.
            if (id != null && inFlight.containsKey(id)) {
                cancelled.add(id);
                if (McpSchema.METHOD_TOOLS_CALL.equals(inFlight.get(id))) {
                    onCancel.accept(id);
                }
            }
            return false; // the SDK has no handler for it; we are it
        }
        Mono<Void> handled = s.handle(message);
        if (message instanceof McpSchema.JSONRPCRequest request) {
            if (request.id() != null) {
                inFlight.put(request.id(), request.method());
                if (McpSchema.METHOD_TOOLS_CALL.equals(request.method()) && request.params() instanceof Map<?, ?> p
                        && p.get("name") != null) {
                    toolNames.put(request.id(), String.valueOf(p.get("name")));
                }
            }
            McpTransportContext context = McpTransportContext.create(Map.of(REQUEST_ID, request.id()));
            handled = handled.contextWrite(c -> c.put(McpTransportContext.KEY, context));
        }
        if (held > 0) {
            handled = handled.doFinally(signal -> budget.release(held));
        }
        handled.subscribe(null, e -> log.warn("handling {} failed: {}", kind(message), e.getMessage()));
        return true;
    }

    private static String kind(McpSchema.JSONRPCMessage m) {
        if (m instanceof McpSchema.JSONRPCRequest r) {
            return r.method();
        }
        if (m instanceof McpSchema.JSONRPCNotification n) {
            return n.method();
        }
        return "a response";
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        McpServerSession s = session;
        return s == null ? Mono.empty() : s.sendNotification(method, params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.fromRunnable(this::close);
    }

    @Override
    public void close() {
        closing = true;
    }

    /**
     * The SDK answers a call of an unknown tool with "Unknown tool: invalid_tool_name" and puts the
     * name only in {@code data}; a client that shows the message alone should see the name too.
     */
    static McpSchema.JSONRPCResponse namingTheTool(McpSchema.JSONRPCResponse r, String tool) {
        McpSchema.JSONRPCResponse.JSONRPCError e = r.error();
        if (tool == null || e == null || !Integer.valueOf(McpSchema.ErrorCodes.INVALID_PARAMS).equals(e.code())
                || e.message() == null || !e.message().startsWith("Unknown tool")) {
            return r;
        }
        String name = tool.length() > 100 ? tool.substring(0, 100) + "..." : tool;
        return McpSchema.JSONRPCResponse.error(r.id(), new McpSchema.JSONRPCResponse.JSONRPCError(e.code(),
                "unknown tool '" + name.replaceAll("\\p{Cntrl}", "?") + "': this server has no tool by that name"
                        + " (tools/list names them)", e.data()));
    }

    private final class Transport implements McpServerTransport {
        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.fromRunnable(() -> write(message));
        }

        void write(McpSchema.JSONRPCMessage message) {
            if (message instanceof McpSchema.JSONRPCResponse r && r.id() != null) {
                message = namingTheTool(r, toolNames.remove(r.id()));
                inFlight.remove(r.id());
                onAnswered.accept(r.id());
                if (cancelled.remove(r.id())) {
                    return; // the client cancelled this request and expects no answer
                }
            }
            try {
                byte[] bytes = json.writeValueAsBytes(message);
                synchronized (out) {
                    out.write(bytes);
                    out.write('\n');
                    out.flush();
                }
            } catch (IOException e) {
                if (!closing) {
                    log.warn("cannot write to the client: {}", e.getMessage());
                }
            }
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> type) {
            return json.convertValue(data, type);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return Mono.fromRunnable(McpStdioTransport.this::close);
        }
    }
}
