package dev.airlock.cli;

import dev.airlock.Payload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.concurrent.Callable;

/** {@code airlock write PATH}: our stdin becomes the file, byte-exact and atomically. */
@Command(name = "write", mixinStandardHelpOptions = true,
        description = {"Writes stdin to a file on the target.",
                "Byte-exact and atomic (readers see the old file or the whole new one); missing parent"
                        + " directories are created; an existing file keeps its mode."})
final class WriteCommand implements Callable<Integer> {
    @ParentCommand
    AirlockCli cli;

    @Parameters(paramLabel = "PATH", description = "The file on the target (~ is the environment's home).")
    String path;

    @Override
    public Integer call() {
        Progress progress = Progress.onStderr("writing " + path);
        try (Session session = cli.openSession()) {
            session.env().files().write(path, Payload.ofStream(progress.wrap(StdStream.stdin())));
        } finally {
            progress.finish();
        }
        return ExitCodes.OK;
    }
}
