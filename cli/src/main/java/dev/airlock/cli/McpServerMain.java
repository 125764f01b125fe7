package dev.airlock.cli;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.internal.Json;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.safety.ApprovalGate;
import dev.airlock.settings.Settings;
import dev.airlock.tools.AirlockTools;
import dev.airlock.tools.ExecSessions;
import dev.airlock.tools.ToolCall;
import dev.airlock.tools.ToolDefinition;
import dev.airlock.tools.ToolResult;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The MCP server behind {@code airlock mcp}: the shared tools ({@link AirlockTools}) over the
 * configured backend, on stdio. Progress of a long exec goes to clients that asked for it (a
 * progress token); a client's cancellation kills the exec's process tree; a write that needs
 * approval is asked through elicitation when the client supports it.
 */
final class McpServerMain {
    /**
     * A successful result whose JSON is at most this long is also sent as text content, as the spec
     * asks of a tool with an outputSchema (a SHOULD, for clients that read only text). A longer one
     * is sent once, in structuredContent, with a short text summary: repeating a megabyte of output
     * (escaped a second time inside a string) would double a reply that a client reads whole into a
     * bounded buffer, which is what ended sessions on large output (issue 34).
     */
    static final int INLINE_JSON_CHARS = 64 * 1024;
    /** In the summary of a long result, a string longer than this is replaced by its length. */
    private static final int SUMMARY_STRING_CHARS = 200;

    private final Settings settings;
    private final Map<Object, ToolCall> calls = new ConcurrentHashMap<>();
    private final McpApprovals approvals = new McpApprovals();
    private final ExecSessions sessions;
    private final AirlockTools tools;
    private Environment environment;
    private boolean closed;

    private McpServerMain(Settings settings, ExecSessions sessions) {
        this.settings = settings;
        this.sessions = sessions;
        this.tools = new AirlockTools(this::environment, AirlockTools.DEFAULT_MAX_READ_BYTES, sessions);
    }

    /**
     * The connection's shell sessions: its own default session, or with {@code airlock.session=NAME}
     * NAME's session, kept across invocations like the CLI's (loaded before each exec and saved after
     * it, so other connections and {@code airlock exec} of NAME see it too). A bad NAME fails here,
     * before the server starts.
     */
    static ExecSessions sessions(Settings settings) {
        Optional<NamedSession.Plan> named = NamedSession.plan(settings);
        if (named.isEmpty()) {
            return ExecSessions.perDoor();
        }
        NamedSession.Plan plan = named.get();
        return ExecSessions.withDefault((env, request) -> {
            NamedSession session = plan.open(env);
            try {
                return new ExecSessions.Started(session.session().start(request), session::close);
            } catch (RuntimeException | Error e) {
                session.close();
                throw e;
            }
        });
    }

    /** Serves until stdin ends, then closes the environment (killing what still runs). Returns the exit code. */
    static int serve(Settings settings) throws Exception {
        // stdout carries the protocol: nothing else may print there.
        OutputStream protocolOut = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 64 * 1024);
        System.setOut(System.err);
        McpServerMain main = new McpServerMain(settings, sessions(settings)); // a bad session name fails before serving
        McpJsonMapper json = McpJsonDefaults.getMapper();
        McpStdioTransport transport = new McpStdioTransport(json, new FileInputStream(FileDescriptor.in), protocolOut,
                main::cancel, main.calls::remove);
        McpSyncServer server = McpServer.sync(transport)
                .serverInfo("airlock", version())
                .instructions("Airlock runs shell commands and file operations on one machine (the configured"
                        + " backend: local host, container or SSH host). Bytes are exact: binary data travels as"
                        + " base64 in the *_base64 fields. Writes to credentials and system files are refused;"
                        + " a refusal is final unless the user agrees.")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .jsonMapper(json)
                .validateToolInputs(false) // our own checks name the field in one line
                .requestTimeout(settings.getDuration(ApprovalGate.TIMEOUT_KEY, Duration.ofSeconds(60))
                        .plus(Duration.ofSeconds(30)))
                .tools(main.specifications())
                .build();
        try {
            transport.run();
        } finally {
            main.close();
            server.close();
        }
        return ExitCodes.OK;
    }

    private List<McpServerFeatures.SyncToolSpecification> specifications() {
        List<McpServerFeatures.SyncToolSpecification> out = new ArrayList<>();
        for (ToolDefinition d : tools.definitions()) {
            McpSchema.Tool tool = McpSchema.Tool.builder()
                    .name(d.name())
                    .title(d.title())
                    .description(d.description())
                    .inputSchema(d.inputSchema())
                    .outputSchema(d.outputSchema())
                    .annotations(new McpSchema.ToolAnnotations(d.title(), d.readOnly(), d.destructive(),
                            d.readOnly(), false, null))
                    .build();
            out.add(McpServerFeatures.SyncToolSpecification.builder()
                    .tool(tool)
                    .callHandler((exchange, request) -> call(d.name(), exchange, request))
                    .build());
        }
        return out;
    }

    private McpSchema.CallToolResult call(String name, McpSyncServerExchange exchange, McpSchema.CallToolRequest request) {
        approvals.use(exchange);
        Object id = exchange.transportContext().get(McpStdioTransport.REQUEST_ID);
        Object token = request.meta() == null ? null : request.meta().get("progressToken");
        ToolCall call = token == null ? ToolCall.unobserved() : ToolCall.withProgress((elapsed, message) ->
                exchange.progressNotification(new McpSchema.ProgressNotification(token,
                        (double) elapsed.toSeconds(), null, message)));
        if (id != null && calls.putIfAbsent(id, call) != null) {
            call.cancel(); // the cancellation arrived before this handler started
        }
        try {
            ToolResult r = tools.call(name, request.arguments(), call);
            if (r.isError()) {
                return McpSchema.CallToolResult.builder().addTextContent(r.text()).isError(true).build();
            }
            String text = r.text();
            return McpSchema.CallToolResult.builder()
                    .addTextContent(text.length() <= INLINE_JSON_CHARS ? text : summary(r.structured(), text.length()))
                    .structuredContent(r.structured())
                    .isError(false)
                    .build();
        } finally {
            if (id != null) {
                calls.remove(id);
            }
        }
    }

    /**
     * The text content of a long result: its JSON with every long string replaced by a marker giving
     * its length, so a text-only reader still sees exit code, counts, file paths and the note.
     */
    static String summary(Map<String, Object> structured, int jsonChars) {
        Map<String, Object> brief = new LinkedHashMap<>();
        structured.forEach((k, v) -> brief.put(k, v instanceof String s && s.length() > SUMMARY_STRING_CHARS
                ? "(" + s.length() + " characters, in structuredContent)" : v));
        return "The full result (" + jsonChars + " characters of JSON) is in structuredContent; in short: "
                + Json.write(brief);
    }

    /**
     * A client's {@code notifications/cancelled}: cancel that call, also if its handler has not
     * started yet (a cancelled marker it finds when it starts; the transport removes it once answered).
     */
    private void cancel(Object requestId) {
        ToolCall early = ToolCall.unobserved();
        ToolCall running = calls.putIfAbsent(requestId, early);
        if (running != null) {
            running.cancel();
        }
    }

    /** Opened at the first tool call, when the client's capabilities (elicitation) are known. */
    private synchronized Environment environment() {
        if (closed) {
            throw new IllegalStateException("the server is shutting down");
        }
        if (environment == null) {
            environment = open(settings, approvals.channel());
        }
        return environment;
    }

    /**
     * The one place this server opens its environment with an approval channel.
     */
    static Environment open(Settings settings, Optional<ApprovalChannel> channel) {
        Environments.Builder builder = Environments.builder().settings(settings);
        channel.ifPresent(builder::approvalChannel);
        return builder.open();
    }

    private void close() {
        Environment e;
        synchronized (this) {
            closed = true;
            e = environment;
        }
        calls.values().forEach(ToolCall::cancel);
        try {
            if (e != null) {
                e.close();
            }
        } finally {
            sessions.close(); // after the environment: its close ended what still ran in them
        }
    }

    private static String version() {
        String v = McpServerMain.class.getPackage().getImplementationVersion();
        return v == null ? "development" : v;
    }
}
