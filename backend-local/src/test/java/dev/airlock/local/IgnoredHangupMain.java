package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.settings.Settings;

/** Run by {@link DefaultSignalsTest} in a JVM that was started with SIGHUP ignored: prints the command's exit code. */
public final class IgnoredHangupMain {
    public static void main(String[] args) {
        try (Environment env = Environments.open(Settings.of("airlock.container", "no"))) {
            System.out.println("exit " + env.exec(ExecRequest.of("kill -HUP $$; echo survived")).exitCode());
        }
    }
}
