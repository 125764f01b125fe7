package dev.airlock.cli;

import dev.airlock.emulator.Emulators;
import dev.airlock.settings.Settings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code airlock emulator NAME --listen HOST:PORT}: the contract itself lives in {@link Emulators#serve}. */
@Command(name = "emulator", mixinStandardHelpOptions = true,
        description = {"Serves the named cloud emulator on loopback until killed.",
                "The first line on stdout, flushed, is 'listening on URL': the base URL a client is configured with.",
                "Then one line per credential the emulator accepts, by the service's own variable:"
                        + " 'credential NAME=VALUE' for one it made at start, 'credential NAME from the environment'"
                        + " when NAME (MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, DAYTONA_API_KEY, VERCEL_TOKEN and VERCEL_TEAM_ID)"
                        + " is set in its environment (the value is not printed). Any other credential is refused as the"
                        + " service refuses it. Sandboxes run under bubblewrap when it is installed."})
final class EmulatorCommand implements Callable<Integer> {
    @ParentCommand
    AirlockCli cli;

    @Parameters(index = "0", paramLabel = "NAME", description = "the emulator, e.g. reference (each cloud backend adds its own)")
    String name;

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = Emulators.DEFAULT_LISTEN,
            description = "loopback address to listen on; port 0 picks a free one (default ${DEFAULT-VALUE})")
    String listen;

    @Option(names = "--faults", paramLabel = "SPEC",
            description = "faults to inject, e.g. exec:lose@nth=2,sandbox-get:status=429+2s@first=3 (airlock.emulator.faults)")
    String faults;

    @Option(names = "--seed", paramLabel = "N", description = "seed of the fault plan (airlock.emulator.seed, default 1)")
    Long seed;

    @Override
    public Integer call() throws IOException {
        Map<String, String> explicit = new LinkedHashMap<>();
        if (faults != null) {
            explicit.put("airlock.emulator.faults", faults);
        }
        if (seed != null) {
            explicit.put("airlock.emulator.seed", String.valueOf(seed));
        }
        Settings settings = explicit.isEmpty() ? cli.settings() : cli.settings().with(explicit);
        Emulators.serve(name, listen, settings, AirlockCli.class.getClassLoader(), System.out, System.err);
        return ExitCodes.OK;
    }
}
