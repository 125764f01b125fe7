package dev.airlock.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.Callable;

/** {@code airlock read PATH}: the file's bytes on our stdout, exactly. */
@Command(name = "read", mixinStandardHelpOptions = true,
        description = "Copies a file on the target to stdout, byte-exact.")
final class ReadCommand implements Callable<Integer> {
    @ParentCommand
    AirlockCli cli;

    @Parameters(paramLabel = "PATH", description = "The file on the target (~ is the environment's home).")
    String path;

    @Override
    public Integer call() throws IOException {
        Progress progress = Progress.onStderr("reading " + path);
        StdStream stdout = StdStream.stdout();
        try (Session session = cli.openSession(); InputStream in = session.env().files().read(path)) {
            OutputStream out = progress.wrap(stdout);
            in.transferTo(out);
            out.flush();
        } catch (IOException e) {
            if (stdout.isBroken()) {
                return ExitCodes.BROKEN_PIPE; // the reader of our stdout went away, like `cat | head`
            }
            throw e;
        } finally {
            progress.finish();
        }
        return ExitCodes.OK;
    }
}
