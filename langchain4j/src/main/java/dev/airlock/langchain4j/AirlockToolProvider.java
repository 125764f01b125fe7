package dev.airlock.langchain4j;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.settings.Settings;
import dev.airlock.tools.AirlockTools;
import dev.airlock.tools.ExecSessions;
import dev.airlock.tools.ToolCall;
import dev.airlock.tools.ToolDefinition;
import dev.airlock.tools.ToolResult;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.model.chat.request.json.JsonBooleanSchema;
import dev.langchain4j.model.chat.request.json.JsonIntegerSchema;
import dev.langchain4j.model.chat.request.json.JsonNumberSchema;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonSchemaElement;
import dev.langchain4j.model.chat.request.json.JsonStringSchema;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.service.tool.ToolProvider;
import dev.langchain4j.service.tool.ToolProviderRequest;
import dev.langchain4j.service.tool.ToolProviderResult;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Airlock's tools for a LangChain4j agent: {@code exec}, {@code write_file}, {@code read_file},
 * {@code list_dir}, {@code stat} and {@code delete}, with the same names, arguments, results and
 * rules as {@code airlock mcp}. Register it in one line, {@code .toolProvider(airlock)} on an
 * {@code AiServices} builder (the README's LangChain4j quickstart is a whole example; docs/agents.md has the rest).
 *
 * <p>{@code exec} runs in a shell session, as in one terminal: {@code cd} and {@code export} carry
 * to the next exec. One session per provider by default, or per chat memory, or none
 * ({@link SessionScope}); a call's {@code session} argument names another one (commands of one
 * session run one at a time, separate sessions side by side). {@link #close()} ends them.
 *
 * <p>The backend is chosen by Airlock's settings ({@code airlock.backend}). Bytes are exact: a
 * command's output and a file's content come back as text when valid UTF-8, else base64. A
 * failure (bad arguments, a refused write, an unavailable backend) is a tool error the model reads,
 * never an exception through the agent.
 */
public final class AirlockToolProvider implements ToolProvider, AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOG = LoggerFactory.getLogger(AirlockToolProvider.class);
    /** The CLI's named-session setting, which this door does not use. */
    private static final String SESSION_KEY = "airlock.session";

    private final Environment environment;
    private final boolean owned;
    private final ExecSessions sessions;
    private final AirlockTools tools;
    private final Map<ToolSpecification, ToolExecutor> specifications;

    private final boolean byMemory;

    private AirlockToolProvider(Environment environment, boolean owned, SessionScope scope) {
        this.environment = environment;
        this.owned = owned;
        this.sessions = switch (Objects.requireNonNull(scope, "scope")) {
            case PROVIDER -> ExecSessions.perDoor();
            case CHAT_MEMORY -> ExecSessions.perScope();
            case NONE -> ExecSessions.none();
        };
        this.byMemory = scope == SessionScope.CHAT_MEMORY;
        this.tools = AirlockTools.over(environment, sessions);
        Map<ToolSpecification, ToolExecutor> m = new LinkedHashMap<>();
        for (ToolDefinition d : tools.definitions()) {
            m.put(specification(d), new Executor(d.name()));
        }
        this.specifications = java.util.Collections.unmodifiableMap(m);
    }

    /**
     * Opens the environment the settings choose; writes that need approval go to {@code approvals}.
     * {@link #close()} closes the environment (killing what still runs).
     */
    public static AirlockToolProvider open(Settings settings, ApprovalCallback approvals) {
        return open(settings, approvals, SessionScope.PROVIDER);
    }

    /** As {@link #open(Settings, ApprovalCallback)}, with exec's shell sessions shared as {@code scope} says. */
    public static AirlockToolProvider open(Settings settings, ApprovalCallback approvals, SessionScope scope) {
        Objects.requireNonNull(approvals, "approvals");
        Objects.requireNonNull(scope, "scope");
        warnIfNamedSession(settings);
        return new AirlockToolProvider(openEnvironment(settings, Optional.of(new CallbackApprovalChannel(approvals))),
                true, scope);
    }

    /** Opens the environment the settings choose, with no approval callback: writes that need approval are denied. */
    public static AirlockToolProvider open(Settings settings) {
        warnIfNamedSession(settings);
        return new AirlockToolProvider(openEnvironment(settings, Optional.empty()), true, SessionScope.PROVIDER);
    }

    /** Tools over an environment the caller opened (and closes), one shell session per provider. */
    public static AirlockToolProvider over(Environment environment) {
        return over(environment, SessionScope.PROVIDER);
    }

    /** Tools over an environment the caller opened (and closes), with exec's shell sessions shared as {@code scope} says. */
    public static AirlockToolProvider over(Environment environment, SessionScope scope) {
        return new AirlockToolProvider(Objects.requireNonNull(environment, "environment"), false, scope);
    }

    /** {@code airlock.session} is the CLI's (state kept across its invocations); here it would be silently dropped. */
    private static void warnIfNamedSession(Settings settings) {
        if (settings.get(SESSION_KEY).isPresent()) {
            LOG.warn("{} is ignored by AirlockToolProvider: its execs share one shell session per provider"
                    + " (or the session a call names), which ends when the provider closes", SESSION_KEY);
        }
    }

    /**
     * The one place this module opens an environment with an approval channel.
     */
    static Environment openEnvironment(Settings settings, Optional<ApprovalChannel> channel) {
        Environments.Builder builder = Environments.builder().settings(settings);
        channel.ifPresent(builder::approvalChannel);
        return builder.open();
    }

    /** The environment the tools work on. */
    public Environment environment() {
        return environment;
    }

    /** The tools as LangChain4j specifications and executors, e.g. for {@code AiServices.builder(...).tools(map)}. */
    public Map<ToolSpecification, ToolExecutor> tools() {
        return specifications;
    }

    @Override
    public ToolProviderResult provideTools(ToolProviderRequest request) {
        return ToolProviderResult.builder().addAll(specifications).build();
    }

    /**
     * Ends the shell sessions, and closes the environment if {@link #open} opened it (killing what
     * still runs). On an environment the caller owns, ending a session waits for its running exec.
     */
    @Override
    public void close() {
        if (owned) {
            try {
                environment.close();
            } finally {
                sessions.close();
            }
        } else {
            sessions.close();
        }
    }

    private final class Executor implements ToolExecutor {
        private final String name;

        Executor(String name) {
            this.name = name;
        }

        @Override
        public String execute(ToolExecutionRequest request, Object memoryId) {
            return run(request, memoryId).text();
        }

        @Override
        public ToolExecutionResult executeWithContext(ToolExecutionRequest request, InvocationContext context) {
            ToolResult r = run(request, context == null ? null : context.chatMemoryId());
            return ToolExecutionResult.builder().isError(r.isError()).result(r.text()).resultText(r.text()).build();
        }

        private ToolResult run(ToolExecutionRequest request, Object memoryId) {
            Map<String, Object> args;
            try {
                args = parse(request.arguments());
            } catch (IllegalArgumentException e) {
                return ToolResult.error(e.getMessage());
            }
            ToolCall call = ToolCall.unobserved();
            return tools.call(name, args, byMemory && memoryId != null ? call.in(memoryId) : call);
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> parse(String arguments) {
        if (arguments == null || arguments.isBlank()) {
            return Map.of();
        }
        Object v;
        try {
            v = JSON.readValue(arguments, Object.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("invalid arguments: not JSON (" + e.getOriginalMessage() + ")");
        }
        if (!(v instanceof Map)) {
            throw new IllegalArgumentException("invalid arguments: expected a JSON object of named arguments");
        }
        return (Map<String, Object>) v;
    }

    // --- JSON Schema maps -> LangChain4j's schema types ---

    private static ToolSpecification specification(ToolDefinition d) {
        return ToolSpecification.builder()
                .name(d.name())
                .description(d.description())
                .parameters((JsonObjectSchema) element(d.inputSchema()))
                .build();
    }

    @SuppressWarnings("unchecked")
    private static JsonSchemaElement element(Map<String, Object> schema) {
        String description = (String) schema.get("description");
        return switch (String.valueOf(schema.get("type"))) {
            case "object" -> {
                JsonObjectSchema.Builder b = JsonObjectSchema.builder().description(description);
                Map<String, Object> props = (Map<String, Object>) schema.getOrDefault("properties", Map.of());
                props.forEach((k, v) -> b.addProperty(k, element((Map<String, Object>) v)));
                Object required = schema.get("required");
                if (required instanceof List<?> r) {
                    b.required((List<String>) r);
                }
                if (schema.get("additionalProperties") != null) {
                    b.additionalProperties(true);
                }
                yield b.build();
            }
            case "integer" -> JsonIntegerSchema.builder().description(description).build();
            case "number" -> JsonNumberSchema.builder().description(description).build();
            case "boolean" -> JsonBooleanSchema.builder().description(description).build();
            default -> JsonStringSchema.builder().description(description).build();
        };
    }
}
