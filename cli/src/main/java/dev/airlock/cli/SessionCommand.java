package dev.airlock.cli;

import dev.airlock.ConfigurationException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/** {@code session list} and {@code session end NAME}: the named sessions {@code --set airlock.session=NAME} keeps. */
@Command(name = "session", mixinStandardHelpOptions = true, subcommands = {SessionCommand.ListSessions.class, SessionCommand.EndSession.class},
        synopsisSubcommandLabel = "(list | end NAME)",
        description = {"Lists the named shell sessions kept between commands, or ends one.",
                "exec runs in one with --set airlock.session=NAME; its state lives under"
                        + " $AIRLOCK_HOME/sessions/BACKEND/TARGET/NAME.snapshot."})
final class SessionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "missing subcommand: list or end NAME");
    }

    /** One saved session: its name, the backend and target it belongs to, and its state file. */
    record Saved(String name, String backend, String target, Path snapshot) {
    }

    /** Every saved session, by name, backend and target. */
    private static List<Saved> saved(Path root) {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        try (Stream<Path> files = Files.find(root, 3, (p, a) -> a.isRegularFile()
                && p.getFileName().toString().endsWith(FileSessionStore.SUFFIX) && root.relativize(p).getNameCount() == 3)) {
            return files.map(p -> {
                String file = p.getFileName().toString();
                return new Saved(file.substring(0, file.length() - FileSessionStore.SUFFIX.length()),
                        p.getParent().getParent().getFileName().toString(), p.getParent().getFileName().toString(), p);
            }).sorted(Comparator.comparing(Saved::name).thenComparing(Saved::backend).thenComparing(Saved::target))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the sessions under " + root + ": " + e.getMessage(), e);
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = {"One line per saved session: its name, backend, target and when it last saved (UTC)."})
    static final class ListSessions implements Callable<Integer> {
        @Override
        public Integer call() throws IOException {
            List<Saved> all = saved(NamedSession.root());
            int name = all.stream().mapToInt(s -> s.name().length()).max().orElse(0);
            int backend = all.stream().mapToInt(s -> s.backend().length()).max().orElse(0);
            int target = all.stream().mapToInt(s -> s.target().length()).max().orElse(0);
            PrintStream out = System.out;
            for (Saved s : all) {
                Instant saved = Files.getLastModifiedTime(s.snapshot()).toInstant().truncatedTo(ChronoUnit.SECONDS);
                out.printf("%-" + name + "s  %-" + backend + "s  %-" + target + "s  %s%n", s.name(), s.backend(), s.target(), saved);
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "end", mixinStandardHelpOptions = true,
            description = {"Removes NAME's saved state on every backend and target it has one; the next command"
                    + " with airlock.session=NAME starts afresh. Prints one line per state removed."})
    static final class EndSession implements Callable<Integer> {
        @Parameters(paramLabel = "NAME", description = "The session's name, as given to --set airlock.session=NAME.")
        String name;

        @Override
        public Integer call() {
            NamedSession.checkedName(name, "the session NAME");
            List<Saved> ended = saved(NamedSession.root()).stream().filter(s -> s.name().equals(name))
                    .filter(s -> FileSessionStore.remove(s.snapshot().getParent(), name)).toList();
            if (ended.isEmpty()) {
                throw new ConfigurationException("no session named '" + name + "'; 'airlock session list' shows the saved ones");
            }
            for (Saved s : ended) {
                System.out.println("ended " + s.name() + " (" + s.backend() + ", " + s.target() + ")");
            }
            System.out.flush();
            return ExitCodes.OK;
        }
    }
}
