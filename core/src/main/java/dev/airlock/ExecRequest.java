package dev.airlock;

import java.io.OutputStream;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One shell command to run on an environment: the command text, working directory, extra
 * environment variables, timeout, stdin and where output goes. Immutable; build it with
 * {@link #builder(String)} or {@link #of(String)}.
 *
 * <pre>{@code
 * ExecRequest req = ExecRequest.builder("sha256sum")
 *         .stdin(Payload.ofFile(Path.of("disk.img")))
 *         .timeout(Duration.ofMinutes(2))
 *         .build();
 * }</pre>
 */
public final class ExecRequest {
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final String command;
    private final String cwd;
    private final Map<String, String> env;
    private final Duration timeout;
    private final Payload stdin;
    private final OutputStream stdout;
    private final OutputStream stderr;
    private final long captureLimit;

    private ExecRequest(Builder b) {
        this.command = b.command;
        this.cwd = b.cwd;
        this.env = Collections.unmodifiableMap(new LinkedHashMap<>(b.env));
        this.timeout = b.timeout;
        this.stdin = b.stdin;
        this.stdout = b.stdout;
        this.stderr = b.stderr;
        this.captureLimit = b.captureLimit;
    }

    public static ExecRequest of(String command) {
        return builder(command).build();
    }

    public static Builder builder(String command) {
        return new Builder(command);
    }

    /** A builder that starts as a copy of this request. */
    public Builder toBuilder() {
        Builder b = new Builder(command);
        b.cwd = cwd;
        b.env.putAll(env);
        b.timeout = timeout;
        b.stdin = stdin;
        b.stdout = stdout;
        b.stderr = stderr;
        b.captureLimit = captureLimit;
        return b;
    }

    /** The shell command text, run by {@code bash -c} (or {@code sh -c} where bash is absent). */
    public String command() {
        return command;
    }

    /** The working directory on the target ({@code ~} expands to the environment's home), if set. */
    public Optional<String> cwd() {
        return Optional.ofNullable(cwd);
    }

    /** Variables added to the command's environment, in insertion order. */
    public Map<String, String> env() {
        return env;
    }

    public Optional<Duration> timeout() {
        return Optional.ofNullable(timeout);
    }

    /** The command's stdin; empty means none: the command reads end-of-input at once. */
    public Optional<Payload> stdin() {
        return Optional.ofNullable(stdin);
    }

    /** Where stdout streams to; empty means captured into the {@link ExecResult}. */
    public Optional<OutputStream> stdoutSink() {
        return Optional.ofNullable(stdout);
    }

    /** Where stderr streams to; empty means captured into the {@link ExecResult}. */
    public Optional<OutputStream> stderrSink() {
        return Optional.ofNullable(stderr);
    }

    /** Capture cap per stream in bytes; -1 means the environment's setting ({@code airlock.output.max-bytes}). */
    public long captureLimit() {
        return captureLimit;
    }

    @Override
    public String toString() {
        // The command text is shown; env values and stdin never are (they may hold secrets).
        return "ExecRequest[command=" + command + ", cwd=" + cwd + ", env=" + env.keySet()
                + ", timeout=" + timeout + ", stdin=" + stdin + "]";
    }

    /** Builds an {@link ExecRequest}; invalid input fails at {@link #build()} with a one-line reason. */
    public static final class Builder {
        private final String command;
        private String cwd;
        private final Map<String, String> env = new LinkedHashMap<>();
        private Duration timeout;
        private Payload stdin;
        private OutputStream stdout;
        private OutputStream stderr;
        private long captureLimit = -1;

        private Builder(String command) {
            this.command = Objects.requireNonNull(command, "command");
        }

        public Builder cwd(String cwd) {
            this.cwd = cwd;
            return this;
        }

        public Builder env(String name, String value) {
            env.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
            return this;
        }

        public Builder env(Map<String, String> vars) {
            vars.forEach(this::env);
            return this;
        }

        /** Kills the command and everything it started after this long; it then exits 124. */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        public Builder stdin(Payload stdin) {
            this.stdin = stdin;
            return this;
        }

        public Builder stdin(byte[] bytes) {
            return stdin(Payload.of(bytes));
        }

        /** Streams output to these sinks instead of capturing it. They are flushed, not closed. */
        public Builder output(OutputStream stdout, OutputStream stderr) {
            this.stdout = Objects.requireNonNull(stdout, "stdout");
            this.stderr = Objects.requireNonNull(stderr, "stderr");
            return this;
        }

        /** Keeps at most this many bytes of each captured stream; the rest is counted as dropped. */
        public Builder captureLimit(long bytes) {
            if (bytes < 0) {
                throw new ConfigurationException("capture limit must be >= 0 bytes, got " + bytes);
            }
            this.captureLimit = bytes;
            return this;
        }

        public ExecRequest build() {
            if (command.indexOf('\0') >= 0) {
                throw new ConfigurationException("the command contains a NUL byte, which no shell can run;"
                        + " pass binary data as stdin instead");
            }
            for (Map.Entry<String, String> e : env.entrySet()) {
                if (!ENV_NAME.matcher(e.getKey()).matches()) {
                    throw new ConfigurationException("invalid environment variable name '"
                            + printable(e.getKey()) + "': use letters, digits and '_', not starting with a digit");
                }
                if (e.getValue().indexOf('\0') >= 0) {
                    throw new ConfigurationException("environment variable " + e.getKey()
                            + " has a NUL byte in its value, which no process environment can hold");
                }
            }
            if (cwd != null && (cwd.isEmpty() || cwd.indexOf('\0') >= 0)) {
                throw new ConfigurationException("the working directory must be a non-empty path without NUL bytes");
            }
            if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
                throw new ConfigurationException("timeout must be positive, got " + timeout);
            }
            return new ExecRequest(this);
        }

        private static String printable(String s) {
            StringBuilder sb = new StringBuilder();
            for (char c : s.toCharArray()) {
                sb.append(c < 0x20 || c == 0x7f ? String.format("\\x%02x", (int) c) : String.valueOf(c));
            }
            return sb.toString();
        }
    }
}
