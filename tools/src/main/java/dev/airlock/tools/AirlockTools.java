package dev.airlock.tools;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.FileStat;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The agent-facing tools over one {@link Environment}: {@code exec}, {@code write_file},
 * {@code read_file}, {@code list_dir}, {@code stat} and {@code delete}. Both doors (the MCP server
 * and LangChain4j) call this, so a tool means the same thing through either.
 *
 * <p>Bytes are exact both ways: text when it is valid UTF-8, base64 otherwise. Payloads go to
 * the environment as {@link Payload}s, never into a command line. A call never throws: bad
 * arguments, refusals and failures come back as a {@link ToolResult#error} naming the problem.
 */
public final class AirlockTools {
    /** read_file refuses files larger than this by default: a tool result lives in memory, whole. */
    public static final long DEFAULT_MAX_READ_BYTES = 8L * 1024 * 1024;

    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern MODE = Pattern.compile("0?[0-7]{3,4}");
    private static final BigDecimal MAX_TIMEOUT_SECONDS = BigDecimal.valueOf(365L * 24 * 3600);

    private final Supplier<Environment> environment;
    private final long maxReadBytes;
    private final List<ToolDefinition> definitions;

    /**
     * @param environment gives the environment the tools work on; called on every tool call, so a
     *                    door can open it lazily (and report a failure to open as a tool error)
     */
    public AirlockTools(Supplier<Environment> environment) {
        this(environment, DEFAULT_MAX_READ_BYTES);
    }

    public AirlockTools(Supplier<Environment> environment, long maxReadBytes) {
        this.environment = Objects.requireNonNull(environment, "environment");
        if (maxReadBytes < 0) {
            throw new IllegalArgumentException("maxReadBytes must be >= 0, got " + maxReadBytes);
        }
        this.maxReadBytes = maxReadBytes;
        this.definitions = ToolDefinitions.all(maxReadBytes);
    }

    public static AirlockTools over(Environment environment) {
        Objects.requireNonNull(environment, "environment");
        return new AirlockTools(() -> environment);
    }

    /** The tools, in a stable order. */
    public List<ToolDefinition> definitions() {
        return definitions;
    }

    /** Runs one tool. Never throws: every failure is a {@link ToolResult#error}. */
    public ToolResult call(String tool, Map<String, Object> arguments, ToolCall call) {
        Map<String, Object> args = arguments == null ? Map.of() : arguments;
        try {
            return switch (tool == null ? "" : tool) {
                case ToolDefinitions.EXEC -> exec(args, call);
                case ToolDefinitions.WRITE_FILE -> writeFile(args);
                case ToolDefinitions.READ_FILE -> readFile(args);
                case ToolDefinitions.LIST_DIR -> listDir(args);
                case ToolDefinitions.STAT -> stat(args);
                case ToolDefinitions.DELETE -> delete(args);
                default -> ToolResult.error("unknown tool '" + tool + "'; the tools are exec, write_file, read_file,"
                        + " list_dir, stat and delete");
            };
        } catch (ToolInputException e) {
            return ToolResult.error(e.getMessage());
        } catch (AirlockException e) {
            String kind = e.kind();
            return ToolResult.error((kind == null || kind.isEmpty() ? "" : kind + ": ") + oneLine(e.getMessage()));
        } catch (UncheckedIOException e) {
            return ToolResult.error("failed: " + oneLine(e.getMessage()));
        } catch (RuntimeException e) {
            // Never a crash through the door: the model gets one line, the door stays up.
            return ToolResult.error("failed: " + oneLine(e.getClass().getSimpleName() + ": " + e.getMessage()));
        }
    }

    // --- exec --------------------------------------------------------------------------------

    private ToolResult exec(Map<String, Object> args, ToolCall call) {
        Args a = new Args(args, "command", "cwd", "timeout_seconds", "env", "stdin", "stdin_base64");
        String command = a.requiredString("command");
        if (command.isBlank()) {
            throw new ToolInputException("command", "must not be empty");
        }
        ExecRequest.Builder b = ExecRequest.builder(command);
        a.optionalString("cwd").ifPresent(cwd -> {
            if (cwd.isEmpty()) {
                throw new ToolInputException("cwd", "must not be empty; leave it out for the default directory");
            }
            b.cwd(cwd);
        });
        a.optionalNumber("timeout_seconds").ifPresent(s -> {
            if (s.signum() <= 0 || s.compareTo(MAX_TIMEOUT_SECONDS) > 0) {
                throw new ToolInputException("timeout_seconds", "must be a number of seconds above 0 (at most a year), got " + s.toPlainString());
            }
            long nanos = s.movePointRight(9).longValue();
            b.timeout(Duration.ofNanos(Math.max(nanos, 1_000_000)));
        });
        for (Map.Entry<String, String> e : a.optionalStringMap("env").entrySet()) {
            if (!ENV_NAME.matcher(e.getKey()).matches()) {
                throw new ToolInputException("env", "'" + oneLine(e.getKey()) + "' is not a variable name (letters, digits and '_', not starting with a digit)");
            }
            if (e.getValue().indexOf('\0') >= 0) {
                throw new ToolInputException("env." + e.getKey(), "contains a NUL character, which no process environment can hold");
            }
            b.env(e.getKey(), e.getValue());
        }
        byte[] stdin = a.bytes("stdin", "stdin_base64", false);
        if (stdin != null) {
            b.stdin(stdin);
        }
        ExecRequest request;
        try {
            request = b.build();
        } catch (ConfigurationException e) {
            throw new ToolInputException("command", oneLine(e.getMessage()));
        }
        if (call.isCancelled()) {
            return ToolResult.error("cancelled before the command started; it did not run");
        }
        Execution execution = environment.get().start(request);
        call.attach(execution);
        long started = System.nanoTime();
        ExecResult r;
        try {
            while (true) {
                Optional<ExecResult> done = execution.await(call.interval());
                if (done.isPresent()) {
                    r = done.get();
                    break;
                }
                Duration elapsed = Duration.ofNanos(System.nanoTime() - started).truncatedTo(ChronoUnit.SECONDS);
                call.progress(elapsed, "running for " + elapsed.toSeconds() + "s");
            }
        } catch (InterruptedException e) {
            execution.cancel();
            Thread.currentThread().interrupt();
            return ToolResult.error("interrupted; the command was cancelled");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("exit_code", r.exitCode());
        putBytes(out, "stdout", r.stdout().bytes());
        putBytes(out, "stderr", r.stderr().bytes());
        out.put("stdout_dropped", r.stdoutDropped());
        out.put("stderr_dropped", r.stderrDropped());
        out.put("timed_out", r.timedOut());
        out.put("cancelled", r.cancelled());
        return ToolResult.ok(out);
    }

    // --- files -------------------------------------------------------------------------------

    private ToolResult writeFile(Map<String, Object> args) {
        Args a = new Args(args, "path", "content", "content_base64", "mode");
        String path = a.path();
        byte[] content = a.bytes("content", "content_base64", true);
        WriteOptions options = WriteOptions.defaults();
        Optional<String> mode = a.optionalString("mode");
        if (mode.isPresent()) {
            if (!MODE.matcher(mode.get()).matches()) {
                throw new ToolInputException("mode", "must be octal permission bits as a string, like \"0644\" or \"755\"; got \"" + oneLine(mode.get()) + "\"");
            }
            options = WriteOptions.mode(Integer.parseInt(mode.get(), 8));
        }
        environment.get().files().write(path, Payload.of(content), options);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("path", path);
        out.put("size", content.length);
        return ToolResult.ok(out);
    }

    private ToolResult readFile(Map<String, Object> args) {
        Args a = new Args(args, "path");
        String path = a.path();
        byte[] content;
        try (InputStream in = environment.get().files().read(path)) {
            content = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 16, maxReadBytes + 1));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path + ": " + e.getMessage(), e);
        }
        if (content.length > maxReadBytes) {
            return ToolResult.error("too large: '" + oneLine(path) + "' has more than " + maxReadBytes
                    + " bytes; read parts of it with exec (head -c, tail -c, dd)");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        putBytes(out, "content", content);
        out.put("size", content.length);
        return ToolResult.ok(out);
    }

    private ToolResult listDir(Map<String, Object> args) {
        Args a = new Args(args, "path");
        String path = a.path();
        List<Object> entries = new ArrayList<>();
        for (FileStat s : environment.get().files().list(path)) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("name", s.name());
            describe(e, s);
            entries.add(e);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("path", path);
        out.put("entries", entries);
        return ToolResult.ok(out);
    }

    private ToolResult stat(Map<String, Object> args) {
        Args a = new Args(args, "path");
        String path = a.path();
        Optional<FileStat> s = environment.get().files().stat(path);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("path", path);
        out.put("exists", s.isPresent());
        s.ifPresent(st -> describe(out, st));
        return ToolResult.ok(out);
    }

    private ToolResult delete(Map<String, Object> args) {
        Args a = new Args(args, "path", "recursive");
        String path = a.path();
        boolean recursive = a.optionalBoolean("recursive").orElse(false);
        Environment env = environment.get();
        if (!recursive) {
            Optional<FileStat> s = env.files().stat(path);
            if (s.isPresent() && s.get().isDirectory()) {
                try {
                    if (!env.files().list(path).isEmpty()) {
                        return ToolResult.error("not empty: '" + oneLine(path) + "' is a directory with entries;"
                                + " pass recursive: true to remove it with everything in it");
                    }
                } catch (NoSuchPathException gone) {
                    // removed meanwhile: delete reports that below
                }
            }
        }
        boolean deleted = env.files().delete(path);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("path", path);
        out.put("deleted", deleted);
        return ToolResult.ok(out);
    }

    private static void describe(Map<String, Object> out, FileStat s) {
        out.put("type", s.type().name().toLowerCase(Locale.ROOT));
        out.put("size", s.size());
        out.put("mode", String.format("%04o", s.mode()));
        out.put("mtime", s.mtime() == null ? "" : s.mtime().toString());
    }

    // --- bytes -------------------------------------------------------------------------------

    /** {@code key}: the bytes as text when they are valid UTF-8; else {@code key_base64}. */
    static void putBytes(Map<String, Object> out, String key, byte[] bytes) {
        Optional<String> text = utf8(bytes);
        if (text.isPresent()) {
            out.put(key, text.get());
        } else {
            out.put(key + "_base64", Base64.getEncoder().encodeToString(bytes));
        }
    }

    private static Optional<String> utf8(byte[] bytes) {
        try {
            return Optional.of(StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }

    static String oneLine(String s) {
        return s == null ? "" : s.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    /** The arguments of one call, checked field by field; every complaint names the field. */
    private static final class Args {
        private final Map<String, Object> args;

        Args(Map<String, Object> args, String... known) {
            this.args = args;
            Set<String> allowed = Set.of(known);
            for (String k : args.keySet()) {
                if (!allowed.contains(k)) {
                    throw new ToolInputException(k, "unknown argument; this tool takes " + String.join(", ", known));
                }
            }
        }

        private Object value(String field) {
            return args.get(field); // JSON null counts as absent
        }

        String path() {
            String p = requiredString("path");
            if (p.isEmpty()) {
                throw new ToolInputException("path", "must not be empty");
            }
            if (p.indexOf('\0') >= 0) {
                throw new ToolInputException("path", "contains a NUL character, which no path can hold");
            }
            return p;
        }

        String requiredString(String field) {
            return optionalString(field).orElseThrow(() -> new ToolInputException(field, "is required (a string)"));
        }

        Optional<String> optionalString(String field) {
            Object v = value(field);
            if (v == null) {
                return Optional.empty();
            }
            if (!(v instanceof String s)) {
                throw new ToolInputException(field, "must be a string, got " + typeOf(v));
            }
            return Optional.of(s);
        }

        Optional<Boolean> optionalBoolean(String field) {
            Object v = value(field);
            if (v == null) {
                return Optional.empty();
            }
            if (!(v instanceof Boolean b)) {
                throw new ToolInputException(field, "must be true or false, got " + typeOf(v));
            }
            return Optional.of(b);
        }

        Optional<BigDecimal> optionalNumber(String field) {
            Object v = value(field);
            if (v == null) {
                return Optional.empty();
            }
            if (!(v instanceof Number n)) {
                throw new ToolInputException(field, "must be a number, got " + typeOf(v));
            }
            try {
                return Optional.of(new BigDecimal(n.toString()));
            } catch (NumberFormatException e) {
                throw new ToolInputException(field, "must be a finite number, got " + n);
            }
        }

        Map<String, String> optionalStringMap(String field) {
            Object v = value(field);
            if (v == null) {
                return Map.of();
            }
            if (!(v instanceof Map<?, ?> m)) {
                throw new ToolInputException(field, "must be an object of NAME: value strings, got " + typeOf(v));
            }
            Map<String, String> out = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!(e.getValue() instanceof String s)) {
                    throw new ToolInputException(field + "." + e.getKey(), "must be a string, got " + typeOf(e.getValue()));
                }
                out.put(String.valueOf(e.getKey()), s);
            }
            return out;
        }

        /** Text (UTF-8) in {@code textField} or base64 in {@code base64Field}: at most one, or exactly one when required. */
        byte[] bytes(String textField, String base64Field, boolean required) {
            Optional<String> text = optionalString(textField);
            Optional<String> b64 = optionalString(base64Field);
            if (text.isPresent() && b64.isPresent()) {
                throw new ToolInputException(base64Field, "give either " + textField + " or " + base64Field + ", not both");
            }
            if (text.isPresent()) {
                return text.get().getBytes(StandardCharsets.UTF_8);
            }
            if (b64.isPresent()) {
                // Whitespace is never base64 data, so dropping it (line-wrapped input) loses nothing.
                String compact = b64.get().replaceAll("[ \\t\\r\\n]", "");
                try {
                    return Base64.getDecoder().decode(compact);
                } catch (IllegalArgumentException e) {
                    throw new ToolInputException(base64Field, "is not valid base64 (" + oneLine(e.getMessage()) + ")");
                }
            }
            if (required) {
                throw new ToolInputException(textField, "is required: give " + textField + " (text) or " + base64Field + " (base64)");
            }
            return null;
        }

        private static String typeOf(Object v) {
            if (v instanceof String) {
                return "a string";
            }
            if (v instanceof Number) {
                return "a number";
            }
            if (v instanceof Boolean) {
                return "a boolean";
            }
            if (v instanceof Map) {
                return "an object";
            }
            if (v instanceof List) {
                return "an array";
            }
            return v.getClass().getSimpleName();
        }
    }
}
