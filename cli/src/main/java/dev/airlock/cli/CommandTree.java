package dev.airlock.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.util.List;
import java.util.Optional;

/**
 * The command line with only the subcommand it invokes: building a command's model costs picocli
 * reflection over all its annotated members (most of a start before any backend work), so a line
 * that names a command builds that one alone. A line that names none, or {@code help}, or one this
 * scan cannot read for sure, gets every command, so help, usage errors and suggestions are unchanged.
 */
final class CommandTree {
    private CommandTree() {
    }

    static CommandLine of(Object top, List<Class<?>> commands, String... args) {
        CommandLine cmd = new CommandLine(top);
        Optional<String> invoked = invoked(cmd.getCommandSpec(), args);
        Optional<Class<?>> only = commands.stream().filter(c -> invoked.isPresent() && invoked.get().equals(name(c))).findFirst();
        for (Class<?> c : only.map(List::<Class<?>>of).orElse(commands)) {
            cmd.addSubcommand(name(c), c);
        }
        return cmd;
    }

    private static String name(Class<?> command) {
        return command.getAnnotation(Command.class).name();
    }

    /** The command the line names after the top-level options, or empty when it names none or help, or is unclear. */
    static Optional<String> invoked(CommandSpec top, String... args) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("-") || a.equals("-")) {
                return a.equals("help") ? Optional.empty() : Optional.of(a);
            }
            int eq = a.indexOf('=');
            OptionSpec o = top.findOption(eq < 0 ? a : a.substring(0, eq));
            if (o == null || !a.startsWith("--") && a.length() > 2) {
                return Optional.empty(); // unknown, "--", or short options clustered: the full tree parses it
            }
            if (eq < 0 && o.arity().max() > 0) {
                i++; // the option's value
            }
        }
        return Optional.empty();
    }
}
