package dev.airlock.cli;

import dev.airlock.Environments;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code airlock backends}: each provider on the class path, and whether it can work here. */
@Command(name = "backends", mixinStandardHelpOptions = true,
        description = {"Lists the backends found and whether each is available.",
                "One line per backend: its name, available or unavailable, and a detail or the reason."
                        + " The one airlock.backend selects is marked with *."})
final class BackendsCommand implements Callable<Integer> {
    @ParentCommand
    AirlockCli cli;

    @Override
    public Integer call() {
        Settings settings = cli.settings();
        String chosen = settings.get(Environments.BACKEND_KEY, "local").trim();
        List<Map.Entry<EnvironmentProvider, Availability>> all =
                Environments.check(settings, AirlockCli.class.getClassLoader());
        int width = all.stream().mapToInt(e -> e.getKey().name().length()).max().orElse(0);
        PrintStream out = System.out;
        for (Map.Entry<EnvironmentProvider, Availability> e : all) {
            Availability a = e.getValue();
            out.printf("%s %-" + width + "s  %-11s  %s%n", e.getKey().name().equals(chosen) ? "*" : " ",
                    e.getKey().name(), a.available() ? "available" : "unavailable", a.reason());
        }
        out.flush();
        return ExitCodes.OK;
    }
}
