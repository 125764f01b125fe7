package dev.airlock.tools;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.CapturedOutput;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.FileStat;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
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
import java.util.UUID;
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
    /**
     * The most one read_file reply carries by default, counted as it travels (JSON text or base64):
     * 4 MiB, which is 3 MiB of any file. Clients read a reply whole into a bounded buffer (10 MiB in
     * the official TypeScript SDK), so a bigger file is read in pieces with offset and length.
     */
    public static final long DEFAULT_MAX_READ_BYTES = 4L * 1024 * 1024;
    /**
     * The most of each exec output stream one reply carries by default, counted as it travels
     * (escaped JSON text or base64): 1 MiB. The argument {@code max_output_bytes} changes it per call.
     */
    public static final long DEFAULT_MAX_OUTPUT_BYTES = 1024L * 1024;
    /**
     * The hard ceiling of {@code max_output_bytes}: 3 MiB per stream, so stdout and stderr together
     * stay near 6 MiB of JSON, well under the 10 MiB a common client accepts for a whole reply.
     */
    public static final long MAX_OUTPUT_CEILING = 3L * 1024 * 1024;
    /**
     * Where exec saves an output stream that did not fit its reply, under the environment's scratch
     * dir (the children's TMPDIR, in its private dir), so the agent reads the rest with read_file
     * for as long as the environment is open, and nothing is left in the target's shared /tmp when
     * it closes. Files are 0600 with random names.
     */
    public static final String OUTPUT_DIR = "airlock-output";

    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern MODE = Pattern.compile("0?[0-7]{3,4}");
    private static final BigDecimal MAX_TIMEOUT_SECONDS = BigDecimal.valueOf(365L * 24 * 3600);

    private final Supplier<Environment> environment;
    private final long maxReadBytes;
    private final ExecSessions sessions;
    private final List<ToolDefinition> definitions;

    /**
     * @param environment gives the environment the tools work on; called on every tool call, so a
     *                    door can open it lazily (and report a failure to open as a tool error)
     */
    public AirlockTools(Supplier<Environment> environment) {
        this(environment, DEFAULT_MAX_READ_BYTES);
    }

    /** Tools whose execs each start fresh ({@link ExecSessions#none()}), with a chosen read_file limit. */
    public AirlockTools(Supplier<Environment> environment, long maxReadBytes) {
        this(environment, maxReadBytes, ExecSessions.none());
    }

    /**
     * @param environment  see {@link #AirlockTools(Supplier)}
     * @param maxReadBytes the most one read_file reply carries, counted as sent
     * @param sessions     the shell sessions exec runs in (the door closes them); with sessions on,
     *                     exec takes a {@code session} argument
     */
    public AirlockTools(Supplier<Environment> environment, long maxReadBytes, ExecSessions sessions) {
        this.environment = Objects.requireNonNull(environment, "environment");
        if (maxReadBytes < 0) {
            throw new IllegalArgumentException("maxReadBytes must be >= 0, got " + maxReadBytes);
        }
        this.maxReadBytes = maxReadBytes;
        this.sessions = Objects.requireNonNull(sessions, "sessions");
        this.definitions = ToolDefinitions.all(maxReadBytes, sessions.enabled());
    }

    /** Tools over one environment, each exec starting fresh. */
    public static AirlockTools over(Environment environment) {
        Objects.requireNonNull(environment, "environment");
        return new AirlockTools(() -> environment);
    }

    /** Tools over one environment whose execs run in {@code sessions}. */
    public static AirlockTools over(Environment environment, ExecSessions sessions) {
        Objects.requireNonNull(environment, "environment");
        return new AirlockTools(() -> environment, DEFAULT_MAX_READ_BYTES, sessions);
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
        Args a = sessions.enabled()
                ? new Args(args, "command", "cwd", "timeout_seconds", "env", "stdin", "stdin_base64", "max_output_bytes", "session")
                : new Args(args, "command", "cwd", "timeout_seconds", "env", "stdin", "stdin_base64", "max_output_bytes");
        String command = a.requiredString("command");
        Optional<String> session = a.optionalString("session");
        sessions.check(session);
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
        long budget = a.optionalCount("max_output_bytes", 1, MAX_OUTPUT_CEILING).orElse(DEFAULT_MAX_OUTPUT_BYTES);
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
        Environment env = environment.get();
        ExecSessions.Started started = sessions.start(env, request, session, call.scope());
        try {
            return await(started.execution(), call, env, budget);
        } finally {
            started.finish().run();
        }
    }

    private ToolResult await(Execution execution, ToolCall call, Environment env, long budget) {
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
        try (ExecResult result = r) {
            Capped stdout = cap("stdout", result.stdout(), budget, env);
            Capped stderr = cap("stderr", result.stderr(), budget, env);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("exit_code", result.exitCode());
            ReplyBytes.put(out, "stdout", stdout.head(), stdout.fit());
            ReplyBytes.put(out, "stderr", stderr.head(), stderr.fit());
            out.put("stdout_dropped", stdout.dropped());
            out.put("stderr_dropped", stderr.dropped());
            out.put("timed_out", result.timedOut());
            out.put("cancelled", result.cancelled());
            if (stdout.file() != null) {
                out.put("stdout_file", stdout.file());
            }
            if (stderr.file() != null) {
                out.put("stderr_file", stderr.file());
            }
            String note = String.join(" ", stdout.note(), stderr.note()).strip();
            if (!note.isEmpty()) {
                out.put("note", note);
            }
            return ToolResult.ok(out);
        }
    }

    /**
     * One output stream as a reply carries it: its head (the first bytes, up to the budget), how
     * many bytes it leaves out, and where the rest is.
     *
     * @param file the file on the target holding every captured byte, or null when nothing was cut
     * @param note how to get the rest, in words for a model; empty when nothing was left out
     */
    private record Capped(byte[] head, ReplyBytes.Fit fit, long dropped, String file, String note) {
    }

    /**
     * Rule: the reply keeps the head of a stream, not head and tail, so what it carries is one exact
     * prefix and the rest is one contiguous range at a known offset of the saved file (its tail is
     * {@code read_file} with offset {@code size - n}). Everything captured that does not fit is saved
     * in the environment's scratch dir under {@link #OUTPUT_DIR}; bytes beyond the capture cap
     * ({@code airlock.output.max-bytes}) were never kept, and the note says so.
     */
    private Capped cap(String stream, CapturedOutput captured, long budget, Environment env) {
        byte[] head;
        try (InputStream in = captured.open()) {
            head = in.readNBytes((int) Math.min(captured.size(), budget)); // no byte costs less than 1
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the captured " + stream + ": " + e.getMessage(), e);
        }
        ReplyBytes.Fit fit = ReplyBytes.fit(head, head.length, budget);
        long notSent = captured.size() - fit.kept();
        long dropped = notSent + captured.dropped();
        if (dropped == 0) {
            return new Capped(head, fit, 0, null, "");
        }
        StringBuilder note = new StringBuilder(stream + ": this reply has the first " + fit.kept() + " of "
                + (captured.size() + captured.dropped()) + " bytes (" + stream + "_dropped: " + dropped + " left out)");
        String file = null;
        if (notSent > 0) {
            String path = env.target().scratchDir() + "/" + OUTPUT_DIR + "/" + UUID.randomUUID() + "." + stream;
            try {
                env.files().write(path, Payload.ofStream(captured.open(), captured.size()), WriteOptions.mode(0600));
                file = path;
                note.append("; all ").append(captured.size()).append(" captured bytes are in ").append(path)
                        .append(": read the rest with read_file {\"path\": \"").append(path).append("\", \"offset\": ")
                        .append(fit.kept()).append("}, in pieces of up to ").append(ReplyBytes.guaranteed(maxReadBytes))
                        .append(" bytes with \"length\"");
            } catch (RuntimeException e) {
                note.append("; the rest could not be saved (").append(oneLine(e.getMessage()))
                        .append("): run the command again with its output redirected to a file");
            }
        }
        if (captured.dropped() > 0) {
            note.append("; the last ").append(captured.dropped()).append(" bytes were beyond the capture cap"
                    + " (airlock.output.max-bytes) and were not kept: redirect the output to a file to keep it all");
        }
        return new Capped(head, fit, dropped, file, note.append('.').toString());
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

    /**
     * Rules: reads {@code length} bytes (default: to the end) from {@code offset} (default 0). The
     * piece must fit one reply ({@code maxReadBytes} of JSON text or base64, see {@link ReplyBytes});
     * a bigger one is an error naming the size, the limit and the piece size that always fits.
     * {@code size} is the whole file's size, so a reader knows when it has it all.
     */
    private ToolResult readFile(Map<String, Object> args) {
        Args a = new Args(args, "path", "offset", "length");
        String path = a.path();
        long offset = a.optionalCount("offset", 0, Long.MAX_VALUE).orElse(0L);
        Optional<Long> length = a.optionalCount("length", 1, Long.MAX_VALUE);
        Environment env = environment.get();
        Optional<Long> statSize = env.files().stat(path)
                .filter(s -> s.type() == FileStat.Type.FILE).map(FileStat::size);
        if (statSize.isPresent() && offset > statSize.get()) { // some streams skip past their end silently
            return ToolResult.error("bad offset: '" + oneLine(path) + "' has " + statSize.get() + " bytes; offset "
                    + offset + " is past its end");
        }
        byte[] piece;
        long size;
        try (InputStream in = env.files().read(path)) {
            long skipped = skip(in, offset);
            if (skipped < offset) {
                return ToolResult.error("bad offset: '" + oneLine(path) + "' has " + skipped + " bytes; offset "
                        + offset + " is past its end");
            }
            // No byte costs less than 1 in a reply: more than the budget never fits.
            piece = in.readNBytes((int) Math.min(length.orElse(Long.MAX_VALUE), Math.min(maxReadBytes + 1, Integer.MAX_VALUE - 16)));
            size = statSize.isPresent() ? statSize.get() : offset + piece.length + in.transferTo(OutputStream.nullOutputStream());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path + ": " + e.getMessage(), e);
        }
        long want = Math.max(0, Math.min(length.orElse(Long.MAX_VALUE), size - offset));
        ReplyBytes.Fit fit = ReplyBytes.fit(piece, (int) Math.min(want, piece.length), maxReadBytes);
        if (want > maxReadBytes || fit.kept() < Math.min(want, piece.length)) {
            long fits = ReplyBytes.guaranteed(maxReadBytes);
            return ToolResult.error("too large: '" + oneLine(path) + "' has " + size + " bytes"
                    + (offset > 0 || length.isPresent() ? " (" + want + " asked from offset " + offset + ")" : "")
                    + "; one read_file reply holds at most " + maxReadBytes + " bytes of JSON text or base64, which is "
                    + fits + " bytes of any file; read it in pieces with offset and length, e.g. offset " + offset
                    + ", length " + fits);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        ReplyBytes.put(out, "content", piece, fit);
        out.put("size", size);
        if (offset > 0 || fit.kept() < size) {
            out.put("offset", offset);
            out.put("length", fit.kept());
        }
        return ToolResult.ok(out);
    }

    /** Skips up to {@code n} bytes; returns how many there were (fewer at the end of the stream). */
    private static long skip(InputStream in, long n) throws IOException {
        long done = 0;
        while (done < n) {
            long k = in.skip(n - done);
            if (k <= 0) {
                if (in.read() < 0) {
                    break;
                }
                k = 1;
            }
            done += k;
        }
        return done;
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

        /** A whole number in [min, max], or empty when absent; the error names the range. */
        Optional<Long> optionalCount(String field, long min, long max) {
            Optional<BigDecimal> n = optionalNumber(field);
            if (n.isEmpty()) {
                return Optional.empty();
            }
            BigDecimal v = n.get();
            if (v.stripTrailingZeros().scale() > 0 || v.compareTo(BigDecimal.valueOf(min)) < 0
                    || v.compareTo(BigDecimal.valueOf(max)) > 0) {
                throw new ToolInputException(field, "must be a whole number from " + min
                        + (max == Long.MAX_VALUE ? " up" : " to " + max) + ", got " + v.toPlainString());
            }
            return Optional.of(v.longValueExact());
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
