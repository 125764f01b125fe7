package dev.airlock.cli;

import dev.airlock.ConfigurationException;
import dev.airlock.Environments;
import dev.airlock.settings.Settings;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.SandboxLifecycle;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

import java.util.concurrent.Callable;

/**
 * {@code airlock snapshot}: saves the files of the attached sandbox and prints the snapshot's id,
 * which {@code --set airlock.BACKEND.snapshot=ID} opens from. A backend whose sandboxes outlive a
 * command must be attached (a snapshot of a sandbox made for this command alone would hold nothing).
 */
@Command(name = "snapshot", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        description = {"Saves the attached sandbox's files (not its processes) and prints the snapshot id on stdout.",
                "Open from it with --set airlock.BACKEND.snapshot=ID (docker: airlock.docker.snapshot)."})
final class SnapshotCommand implements Callable<Integer> {
    @ParentCommand
    AirlockCli cli;

    @Override
    public Integer call() {
        Settings settings = cli.settings();
        String name = settings.get(Environments.BACKEND_KEY, "local").trim();
        EnvironmentProvider provider = Environments.provider(name, AirlockCli.class.getClassLoader());
        if (provider instanceof SandboxLifecycle l && settings.get(l.attachKey(), "").isBlank()) {
            throw new ConfigurationException("snapshot saves an attached " + name + " sandbox: pass --set " + l.attachKey()
                    + "=ID with the id airlock up printed");
        }
        String id;
        try (Session session = cli.openSession()) {
            id = session.env().snapshot();
        }
        System.out.println(id);
        System.out.flush();
        return ExitCodes.OK;
    }
}
