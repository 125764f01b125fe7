package dev.airlock.cli;

import dev.airlock.ConfigurationException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code airlock exec}: one shell command, our stdin to its stdin, its output to ours, its exit status. */
@Command(name = ExecCommand.NAME, mixinStandardHelpOptions = true,
        customSynopsis = "airlock exec [-n] [--cwd DIR] [--timeout DURATION] [--env K[=V]]... [--] WORDS...",
        description = {"Runs a shell command on the target.",
                "WORDS are joined by single spaces into one shell command (as ssh does); options stop at"
                        + " the first word. Our stdin goes to the command byte-exact, unless -n is given or"
                        + " stdin is a terminal; its stdout and stderr come back as they are written."},
        footer = {"%nExit status: the command's own; 124 after --timeout; 125 when Airlock failed, with one"
                + " line on stderr (airlock: denied: ..., airlock: unavailable: ..., airlock: usage: ...,"
                + " airlock: ...); 130/143 after SIGINT/SIGTERM."})
final class ExecCommand implements Callable<Integer> {
    // Named once for picocli and for PlainExecLine, which reads an exec line without it.
    static final String NAME = "exec";
    static final String NO_STDIN = "-n";
    static final String CWD = "--cwd";
    static final String TIMEOUT = "--timeout";
    static final String ENV = "--env";

    @ParentCommand
    AirlockCli cli;

    @Option(names = NO_STDIN, description = "Give the command no stdin (it reads end-of-input at once).")
    boolean noStdin;

    @Option(names = CWD, paramLabel = "DIR", description = "Working directory on the target (~ is the environment's home).")
    String cwd;

    @Option(names = TIMEOUT, paramLabel = "DURATION", description = "Kill the command and everything it started after this"
            + " long (plain seconds, or 500ms, 2s, 1m, 1h); exit 124.")
    String timeout;

    @Option(names = ENV, paramLabel = "K[=V]", description = "An environment variable for the command; K alone takes"
            + " its value from our environment (use that for secrets: K=V is visible in our argv). Repeatable.")
    List<String> env = new ArrayList<>();

    @Parameters(paramLabel = "WORDS", arity = "0..*", description = "The command.")
    List<String> words = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        if (words.isEmpty()) {
            throw new ConfigurationException("exec needs a command: airlock exec [-n] [--cwd DIR] [--timeout DURATION] [--env K=V]... [--] WORDS...");
        }
        ExecRequest.Builder b = ExecRequest.builder(String.join(" ", words));
        if (cwd != null) {
            b.cwd(cwd);
        }
        BigDecimal seconds = timeout == null ? null : parseSeconds(timeout);
        if (seconds != null) {
            b.timeout(Duration.ofNanos(seconds.movePointRight(9).longValue()));
        }
        for (String kv : env) {
            int eq = kv.indexOf('=');
            if (eq < 0 && !kv.isEmpty()) {
                // --env K: the value comes from our environment, so a secret never sits in our argv
                String value = System.getenv(kv);
                if (value == null) {
                    throw new ConfigurationException("--env " + kv + ": " + kv + " is not set");
                }
                b.env(kv, value);
                continue;
            }
            if (eq <= 0) {
                throw new ConfigurationException("--env needs NAME=VALUE or NAME with a name before '='");
            }
            b.env(kv.substring(0, eq), kv.substring(eq + 1));
        }
        Progress progress = Progress.onStderr("stdin");
        if (!noStdin && !StdStream.wasClosed(0) && !Terminals.isTerminal(Terminals.STDIN)) {
            b.stdin(Payload.ofStream(progress.wrap(StdStream.stdin())));
        }
        StdStream out = StdStream.stdout();
        StdStream err = StdStream.stderr();
        ExecRequest request = b.output(out, err).build();

        java.util.Optional<NamedSession.Plan> named = NamedSession.plan(cli.settings()); // a bad name fails before anything opens
        try (Session session = cli.openSession();
             NamedSession inSession = named.isEmpty() ? null : named.get().open(session.env())) {
            Execution execution = inSession == null ? session.env().start(request) : inSession.session().start(request);
            session.onSignal(execution::cancel);
            out.onBrokenPipe(execution::cancel);
            ExecResult result = execution.await();
            progress.finish();
            if (out.isBroken()) {
                return ExitCodes.BROKEN_PIPE;
            }
            if (result.timedOut()) {
                System.err.println("airlock: timed out after " + seconds.stripTrailingZeros().toPlainString() + "s");
                return ExitCodes.EXEC_TIMEOUT;
            }
            return result.exitCode();
        }
    }

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?|\\.\\d+)\\s*(ms|s|m|h)?");

    /** Plain seconds ({@code 30}, {@code 1.5}) or a duration like every duration setting ({@code 500ms}, {@code 2s}, {@code 1m}, {@code 1h}). */
    static BigDecimal parseSeconds(String s) {
        Matcher m = DURATION.matcher(s.trim().toLowerCase(Locale.ROOT));
        if (m.matches()) {
            BigDecimal n = new BigDecimal(m.group(1));
            BigDecimal v = switch (m.group(2) == null ? "s" : m.group(2)) {
                case "ms" -> n.movePointLeft(3);
                case "m" -> n.multiply(BigDecimal.valueOf(60));
                case "h" -> n.multiply(BigDecimal.valueOf(3600));
                default -> n;
            };
            if (v.compareTo(BigDecimal.valueOf(Long.MAX_VALUE / 1_000_000_000L)) < 0 && v.movePointRight(9).longValue() > 0) {
                return v;
            }
        }
        throw new ConfigurationException("--timeout needs a positive duration such as 30 (seconds), 1.5, 500ms, 2s, 1m or 1h,"
                + " got '" + s + "'");
    }
}
