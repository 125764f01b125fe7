package dev.airlock.cli;

import dev.airlock.ConfigurationException;
import dev.airlock.Environments;
import dev.airlock.settings.Settings;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.LeftoverCollector;
import dev.airlock.spi.SandboxLifecycle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.concurrent.Callable;

/**
 * {@code up}, {@code down ID} and {@code gc}: sandboxes that outlive one command, for backends
 * whose provider implements {@link SandboxLifecycle} (found through ServiceLoader like any other).
 */
final class SandboxCommands {
    private SandboxCommands() {
    }

    /** The configured backend's lifecycle, or a usage error naming the backends that have one. */
    static SandboxLifecycle lifecycle(Settings settings) {
        return capability(settings, SandboxLifecycle.class, "has no sandboxes that outlive a command; up and down work with");
    }

    /** The configured backend's collector of leftovers, or a usage error naming the backends that have one. */
    static LeftoverCollector collector(Settings settings) {
        return capability(settings, LeftoverCollector.class, "leaves nothing behind to collect; gc works with");
    }

    /** The configured backend's provider as {@code type}, or a one-line error naming the backends that are one. */
    private static <T> T capability(Settings settings, Class<T> type, String missing) {
        ClassLoader loader = AirlockCli.class.getClassLoader();
        String name = settings.get(Environments.BACKEND_KEY, "local").trim();
        EnvironmentProvider provider = Environments.provider(name, loader);
        if (type.isInstance(provider)) {
            return type.cast(provider);
        }
        List<String> with = Environments.providers(loader).values().stream()
                .filter(type::isInstance).map(EnvironmentProvider::name).toList();
        throw new ConfigurationException("the " + name + " backend " + missing + " "
                + (with.isEmpty() ? "no backend on the class path" : String.join(", ", with)) + " (--backend NAME)");
    }

    @Command(name = "up", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
            description = {"Creates a sandbox that outlives this command and prints its id on stdout.",
                    "Later commands attach to it with --set KEY=ID (docker: airlock.docker.container);",
                    "'down ID' removes it; the cloud's end by themselves after --ttl.",
                    "With --port, each port is declared at create and one 'PORT URL' line per port follows the id."})
    static final class Up implements Callable<Integer> {
        @ParentCommand
        AirlockCli cli;

        @Option(names = "--ttl", paramLabel = "DURATION",
                description = "How long the sandbox lives (default 1h; 30m, 2h, 1d): Modal's and Vercel's lifetime,"
                        + " Daytona's idle time before it stops; docker containers live until 'down'.")
        String ttl;

        @Option(names = "--port", paramLabel = "PORT",
                description = "A port of the sandbox to expose (repeatable): declared at create (airlock.ports), and"
                        + " its URL on this machine printed as 'PORT URL' after the id. Docker needs --set airlock.network=on.")
        List<Integer> ports = new ArrayList<>();

        @Override
        public Integer call() {
            Settings settings = cli.settings();
            SandboxLifecycle l = lifecycle(settings);
            if (!ports.isEmpty()) {
                ports.forEach(dev.airlock.Ports::check);
                SortedSet<Integer> all = new TreeSet<>(dev.airlock.Ports.declared(settings));
                all.addAll(ports);
                settings = settings.with(Map.of(dev.airlock.Ports.KEY,
                        all.stream().map(String::valueOf).collect(Collectors.joining(","))));
            }
            // The one duration parser, with the option's name in its error.
            Duration lifetime = ttl == null ? SandboxLifecycle.DEFAULT_TTL
                    : Settings.of("--ttl", ttl).getDuration("--ttl", SandboxLifecycle.DEFAULT_TTL);
            if (lifetime.isZero() || lifetime.isNegative()) {
                throw new ConfigurationException("--ttl must be positive, such as 30m or 2h");
            }
            if (ttl != null && !l.expires()) {
                System.err.println("airlock: warning: these sandboxes live until 'airlock down ID'; --ttl is not applied");
            }
            String id = l.up(settings, lifetime);
            List<String> urls;
            try {
                urls = expose(settings.with(Map.of(l.attachKey(), id)), ports);
            } catch (RuntimeException e) {
                // A sandbox whose ports cannot be reached is not what was asked for: none is left behind.
                try {
                    l.down(settings, id);
                } catch (RuntimeException again) {
                    e.addSuppressed(again);
                }
                throw e;
            }
            System.out.println(id);
            urls.forEach(System.out::println);
            System.out.flush();
            System.err.println("airlock: attach with --set " + l.attachKey() + "=" + id
                    + (l.expires() ? "; it ends by itself after " + words(lifetime) : "") + "; remove with: airlock down " + id);
            return ExitCodes.OK;
        }

        /** One {@code PORT URL} line per port, through an environment attached to the new sandbox. */
        private static List<String> expose(Settings attached, List<Integer> ports) {
            List<String> lines = new ArrayList<>();
            if (ports.isEmpty()) {
                return lines;
            }
            try (dev.airlock.Environment env = Environments.open(dev.airlock.spi.OpenContext.of(attached))) {
                for (int p : new TreeSet<>(ports)) {
                    lines.add(p + " " + env.ports().expose(p));
                }
            }
            return lines;
        }

        /** 1h, 90m, 45s: the largest whole unit. */
        static String words(Duration d) {
            long s = d.toSeconds();
            return s % 86_400 == 0 ? s / 86_400 + "d" : s % 3600 == 0 ? s / 3600 + "h" : s % 60 == 0 ? s / 60 + "m" : s + "s";
        }
    }

    @Command(name = "url", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
            description = {"Prints the URL on this machine where PORT of the attached sandbox answers",
                    "(attach with --set KEY=ID as 'up' says; docker: a port 'up --port' declared)."})
    static final class Url implements Callable<Integer> {
        @ParentCommand
        AirlockCli cli;

        @Parameters(paramLabel = "PORT", description = "The port in the sandbox.")
        int port;

        @Override
        public Integer call() {
            Settings settings = cli.settings();
            SandboxLifecycle l = lifecycle(settings);
            dev.airlock.Ports.check(port);
            if (settings.get(l.attachKey()).map(String::isBlank).orElse(true)) {
                throw new ConfigurationException("url needs a sandbox made by 'airlock up --port " + port
                        + "': attach to it with --set " + l.attachKey() + "=ID");
            }
            try (Session session = cli.openSession()) {
                URI url = session.env().ports().expose(port);
                System.out.println(url);
                System.out.flush();
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "down", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
            description = "Stops and removes a sandbox that 'up' created.")
    static final class Down implements Callable<Integer> {
        @ParentCommand
        AirlockCli cli;

        @Parameters(paramLabel = "ID", description = "The id 'up' printed.")
        String id;

        @Override
        public Integer call() {
            Settings settings = cli.settings();
            lifecycle(settings).down(settings, id);
            return ExitCodes.OK;
        }
    }

    @Command(name = "gc", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
            description = {"Removes sandboxes Airlock labelled that were left behind by processes that died",
                    "before closing them; prints each id removed."})
    static final class Gc implements Callable<Integer> {
        @ParentCommand
        AirlockCli cli;

        @Option(names = "--older-than", paramLabel = "DURATION", defaultValue = "24h",
                description = "Only sandboxes created longer ago than this (default ${DEFAULT-VALUE}; 30s, 5m, 2h, 1d).")
        String olderThan;

        @Option(names = "--all", description = "Also remove the sandboxes 'up' created.")
        boolean all;

        @Override
        public Integer call() {
            Settings settings = cli.settings();
            // The one duration parser, with the option's name in its error.
            Duration age = Settings.of("--older-than", olderThan).getDuration("--older-than", Duration.ZERO);
            List<String> removed = collector(settings).gc(settings, age, all);
            PrintStream out = System.out;
            removed.forEach(out::println);
            out.flush();
            return ExitCodes.OK;
        }
    }
}
