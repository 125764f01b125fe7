package dev.airlock.cli;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import dev.airlock.settings.SettingsCheck;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/** The {@code airlock} command line; {@code ./airlock} at the repository root builds and runs it. */
@Command(name = "airlock", mixinStandardHelpOptions = true, versionProvider = AirlockCli.Version.class,
        synopsisSubcommandLabel = "COMMAND",
        description = "Runs an agent's commands and file transfers on a pluggable backend, byte-exact.",
        footer = {"%nExit codes of every command but exec: 0 ok, 1 other failure, 2 usage, 3 denied,"
                + " 4 backend unavailable, 5 doctor found a leak. exec exits with the command's own status,"
                + " 124 after --timeout, 125 when Airlock itself failed. 128+N after signal N."})
public final class AirlockCli implements Callable<Integer> {
    private static final String LOG_PREFIX = "org.slf4j.simpleLogger.";

    @Mixin
    SettingsOptions options;

    @Spec
    CommandSpec spec;

    /**
     * The commands, in the order help lists them. Not in the annotation: picocli builds every listed
     * command's model by reflection at start, so {@link CommandTree} adds only the one invoked.
     */
    static final List<Class<?>> COMMANDS = List.of(ExecCommand.class, WriteCommand.class, ReadCommand.class,
            BackendsCommand.class, SandboxCommands.Up.class, SandboxCommands.Url.class, SandboxCommands.Down.class, SandboxCommands.Gc.class, SnapshotCommand.class,
            DoctorCommand.class, EmulatorCommand.class, McpCommand.class, SessionCommand.class, CommandLine.HelpCommand.class);

    /**
     * Loggers that log every byte or header a client sends at debug; --debug keeps them at info so
     * Airlock's own lines stay readable (and no request body or header is printed).
     */
    private static final List<String> WIRE_LOGGERS = List.of("org.apache.hc", "com.github.dockerjava", "okhttp3",
            "io.grpc", "io.netty", "com.jcraft.jsch");

    private final Signals signals = new Signals();

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs one command line and returns its exit code. */
    static int run(String... args) {
        AirlockCli cli = new AirlockCli();
        int code = PlainExecLine.read(cli, args).map(cli::runExec).orElseGet(() -> cli.parseAndExecute(args));
        int sig = cli.signals.received();
        return sig != 0 ? 128 + sig : code;
    }

    /** Any line: picocli parses it, prints help and usage errors, and runs the command it names. */
    private int parseAndExecute(String... args) {
        CommandLine cmd = commandLine(args);
        cmd.setExecutionStrategy(this::execute);
        cmd.setParameterExceptionHandler(this::onUsageError);
        cmd.setExecutionExceptionHandler((e, c, parsed) -> onFailure(e, c.getCommand() instanceof ExecCommand));
        return cmd.execute(args);
    }

    /** picocli's model of this command line, with the parser settings the contract needs. */
    CommandLine commandLine(String... args) {
        CommandLine cmd = CommandTree.of(this, COMMANDS, args);
        cmd.setExpandAtFiles(false); // "@notes" is an argument, never a file to read arguments from
        CommandLine exec = cmd.getSubcommands().get(ExecCommand.NAME);
        if (exec != null) {
            exec.setStopAtPositional(true); // options stop at the command's first word
        }
        return cmd;
    }

    @Override
    public Integer call() {
        List<String> names = spec.subcommands().keySet().stream().toList();
        throw new ParameterException(spec.commandLine(), "missing command: " + String.join(", ", names.subList(0, names.size() - 1))
                + " or " + names.get(names.size() - 1));
    }

    Settings settings() {
        return options.settings();
    }

    /** Opens the configured environment for one command, with SIGINT/SIGTERM handling. */
    Session openSession() {
        return Session.open(settings(), signals);
    }

    private int execute(ParseResult parsed) {
        configureLogging(options.debug);
        warnIfSessionIgnored(parsed);
        return new CommandLine.RunLast().execute(parsed);
    }

    /**
     * {@code airlock.session} names the shell session of exec and mcp; any other command runs no
     * shell session, and says so in one line on stderr instead of dropping the setting silently.
     */
    private void warnIfSessionIgnored(ParseResult parsed) {
        ParseResult sub = parsed.subcommand();
        if (sub == null || sub.isUsageHelpRequested() || sub.isVersionHelpRequested()) {
            return;
        }
        Object command = sub.commandSpec().userObject();
        if (command instanceof ExecCommand || command instanceof McpCommand || command instanceof CommandLine.HelpCommand) {
            return;
        }
        boolean set;
        try {
            set = settings().get(NamedSession.KEY).isPresent();
        } catch (RuntimeException e) {
            return; // the command reports a bad setting itself
        }
        if (set) {
            System.err.println("airlock: warning: " + NamedSession.KEY + " is ignored by '" + sub.commandSpec().name()
                    + "': only exec and mcp run in a shell session");
        }
    }

    /** A line {@link PlainExecLine} read: what picocli's execution above does for it, without picocli. */
    private int runExec(ExecCommand exec) {
        configureLogging(options.debug);
        try {
            return exec.call();
        } catch (Exception e) {
            return onFailure(e, true);
        }
    }

    private int onUsageError(ParameterException e, String[] args) {
        CommandLine where = e.getCommandLine();
        CommandLine about = where;
        String message = e.getMessage();
        if (e instanceof UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
            String first = u.getUnmatched().get(0);
            String option = first.contains("=") ? first.substring(0, first.indexOf('=')) : first;
            Optional<CommandLine> owner = first.startsWith("-") ? ownerOf(option, where, args) : Optional.empty();
            if (owner.isPresent()) {
                about = owner.get();
                message = misplaced(option, about);
            } else if (!first.startsWith("-") && !where.getSubcommands().isEmpty()) {
                message = "unknown command '" + first + "'; " + SettingsCheck.closestName(first, where.getSubcommands().keySet())
                        .map(c -> "did you mean " + c + "?").orElse("the commands are " + String.join(", ", where.getSubcommands().keySet()));
            }
        }
        String help = about.getCommandSpec().qualifiedName() + " --help";
        return ExitCodes.report(new ConfigurationException(message + " (see '" + help + "')", e),
                where.getCommand() instanceof ExecCommand, options != null && options.debug, System.err);
    }

    /**
     * The command {@code option} (given where it does not belong) is an option of: the command the
     * line names after it if that one has it, else the first that has it.
     */
    private static Optional<CommandLine> ownerOf(String option, CommandLine where, String[] args) {
        Optional<CommandLine> named = Arrays.stream(args).map(where.getSubcommands()::get).filter(Objects::nonNull).findFirst();
        return Stream.concat(named.stream(), where.getSubcommands().values().stream())
                .filter(c -> c.getCommandSpec().findOption(option) != null).findFirst();
    }

    /** {@code --timeout is an option of exec: give it after the command, as in 'airlock exec --timeout DURATION ...'}. */
    private static String misplaced(String option, CommandLine owner) {
        OptionSpec o = owner.getCommandSpec().findOption(option);
        String usage = o.arity().max() > 0 ? option + " " + o.paramLabel() : option;
        return option + " is an option of " + owner.getCommandName() + ": give it after the command, as in '"
                + owner.getCommandSpec().qualifiedName() + " " + usage + " ...'";
    }

    private int onFailure(Exception e, boolean exec) {
        int sig = signals.received();
        if (sig != 0) {
            return 128 + sig; // cancelled on purpose: the failure it caused is no news
        }
        return ExitCodes.report(e, exec, options.debug, System.err);
    }

    /** Quiet by default (warnings only), on stderr; --debug shows debug logs. Before any logger exists. */
    private static void configureLogging(boolean debug) {
        if (debug) {
            System.setProperty(LOG_PREFIX + "defaultLogLevel", "debug");
        } else if (System.getProperty(LOG_PREFIX + "defaultLogLevel") == null) {
            System.setProperty(LOG_PREFIX + "defaultLogLevel", "warn");
        }
        for (String wire : WIRE_LOGGERS) {
            if (System.getProperty(LOG_PREFIX + "log." + wire) == null) {
                System.setProperty(LOG_PREFIX + "log." + wire, "info");
            }
        }
        System.setProperty(LOG_PREFIX + "logFile", "System.err");
        System.setProperty(LOG_PREFIX + "showShortLogName", "true");
        System.setProperty(LOG_PREFIX + "showThreadName", String.valueOf(debug));
        System.setProperty(LOG_PREFIX + "levelInBrackets", "true");
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = AirlockCli.class.getPackage().getImplementationVersion();
            return new String[] {"airlock " + (v == null ? "(development build)" : v)};
        }
    }
}
