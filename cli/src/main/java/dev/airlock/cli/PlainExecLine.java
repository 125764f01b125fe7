package dev.airlock.cli;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Reads a plain {@code exec} line without picocli. Building picocli's model from the annotations is
 * most of a CLI start (measured: 80-100 ms of a 240 ms {@code exec true}: the reflection and the
 * annotations' dynamic proxies, which Java 17's class-data archive cannot hold), and an agent's
 * lines are nearly all {@code exec}. This reads only lines whose meaning is certain: the global
 * options, {@code exec}, its options each given in full ({@code --cwd DIR} or {@code --cwd=DIR}),
 * then the words. Anything else (help, version, an unknown or clustered option, a repeated
 * single-valued one, a value that looks like an option, a missing value) is declined, and picocli
 * parses the line, so its help, errors and exit codes stay the only ones. {@code PlainExecLineTest}
 * checks that every line read here is read the same way by picocli.
 */
final class PlainExecLine {
    private PlainExecLine() {
    }

    /** The exec command this line runs, bound to {@code cli}, or empty when picocli must parse the line. */
    static Optional<ExecCommand> read(AirlockCli cli, String... args) {
        SettingsOptions options = new SettingsOptions();
        ExecCommand exec = new ExecCommand();
        Tokens tokens = new Tokens(args);
        if (!readGlobalOptions(tokens, options) || !readExecOptions(tokens, exec)) {
            return Optional.empty();
        }
        exec.words = new ArrayList<>(tokens.rest());
        exec.cli = cli;
        cli.options = options;
        return Optional.of(exec);
    }

    /** Up to and including the word {@code exec}; false when the line is anything else. */
    private static boolean readGlobalOptions(Tokens tokens, SettingsOptions options) {
        while (tokens.hasNext()) {
            String arg = tokens.next();
            if (arg.equals(ExecCommand.NAME)) {
                return true;
            }
            Option o = tokens.option(arg);
            boolean read = o != null && switch (o.name()) {
                case SettingsOptions.DEBUG -> options.debug = tokens.flagOnce(o);
                case SettingsOptions.BACKEND -> (options.backend = tokens.valueOnce(o)) != null;
                case SettingsOptions.CONFIG -> (options.config = path(tokens.valueOnce(o))) != null;
                case SettingsOptions.SET -> tokens.addValue(o, options.values);
                default -> false;
            };
            if (!read) {
                return false;
            }
        }
        return false; // no command
    }

    /** The exec options, up to the first word or {@code --}; false on anything picocli must judge. */
    private static boolean readExecOptions(Tokens tokens, ExecCommand exec) {
        while (tokens.hasNext()) {
            String arg = tokens.peek();
            if (arg.equals("--")) {
                tokens.next();
                return true;
            }
            if (!arg.startsWith("-") || arg.equals("-")) {
                return true; // the first word: options stop here
            }
            Option o = tokens.option(tokens.next());
            boolean read = o != null && switch (o.name()) {
                case ExecCommand.NO_STDIN -> exec.noStdin = tokens.flagOnce(o);
                case ExecCommand.CWD -> (exec.cwd = tokens.valueOnce(o)) != null;
                case ExecCommand.TIMEOUT -> (exec.timeout = tokens.valueOnce(o)) != null;
                case ExecCommand.ENV -> tokens.addValue(o, exec.env);
                default -> false;
            };
            if (!read) {
                return false;
            }
        }
        return true;
    }

    /** picocli's conversion for a {@code Path} option; null for no value, or one picocli would word an error for. */
    private static Path path(String value) {
        try {
            return value == null ? null : Path.of(value);
        } catch (InvalidPathException e) {
            return null;
        }
    }

    /** An option as given: its name, and the value attached with {@code =} (null when none was). */
    private record Option(String name, String value) {
    }

    /** The line, read left to right, and which single-valued options it gave so far. */
    private static final class Tokens {
        private final List<String> args;
        private final Set<String> seen = new HashSet<>();
        private int next;

        Tokens(String... args) {
            this.args = Arrays.asList(args);
        }

        boolean hasNext() {
            return next < args.size();
        }

        String peek() {
            return args.get(next);
        }

        String next() {
            return args.get(next++);
        }

        List<String> rest() {
            return args.subList(next, args.size());
        }

        /** {@code -n}, {@code --name} or {@code --name=value}; null for a word, {@code --} or a short cluster. */
        Option option(String arg) {
            if (arg.equals("--")) {
                return null;
            }
            if (arg.startsWith("--")) {
                int eq = arg.indexOf('=');
                return eq < 0 ? new Option(arg, null) : new Option(arg.substring(0, eq), arg.substring(eq + 1));
            }
            return arg.length() == 2 && arg.charAt(0) == '-' ? new Option(arg, null) : null;
        }

        /**
         * The option's value, attached or the next argument; null when it is missing or looks like an
         * option or a command (picocli's rules for those are its own).
         */
        String value(Option o) {
            String v = o.value();
            if (v == null) {
                if (!hasNext()) {
                    return null;
                }
                v = next();
            }
            return v.startsWith("-") || v.equals(ExecCommand.NAME) ? null : v;
        }

        /** Adds a repeatable option's value to {@code values}; false when it has none. */
        boolean addValue(Option o, List<String> values) {
            String v = value(o);
            return v != null && values.add(v);
        }

        /** The value of a single-valued option, or null when it has none or was given before. */
        String valueOnce(Option o) {
            String v = value(o);
            return v != null && seen.add(o.name()) ? v : null;
        }

        /** True for a flag given bare ({@code --debug}, not {@code --debug=true}) and for the first time. */
        boolean flagOnce(Option o) {
            return o.value() == null && seen.add(o.name());
        }
    }
}
