package dev.airlock.cli;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.FileStat;
import dev.airlock.shell.Shell;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Optional;
import java.util.concurrent.Callable;

/** {@code airlock read PATH}: the file's bytes on our stdout, exactly. */
@Command(name = "read", mixinStandardHelpOptions = true,
        description = "Copies a file on the target to stdout, byte-exact.")
final class ReadCommand implements Callable<Integer> {
    @ParentCommand
    AirlockCli cli;

    @Parameters(paramLabel = "PATH", description = "The file on the target (~ is the environment's home).")
    String path;

    @Option(names = "--any-file", description = "Read a FIFO, device or other non-regular file too (it may never end).")
    boolean anyFile;

    @Override
    public Integer call() throws IOException {
        Progress progress = Progress.onStderr("reading " + path);
        StdStream stdout = StdStream.stdout();
        try (Session session = cli.openSession(); InputStream in = open(session.env())) {
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

    /** A FIFO with no writer would wait forever and /dev/zero never ends: only regular files unless asked. */
    private InputStream open(Environment env) {
        if (!anyFile) {
            Optional<FileStat> st = env.files().stat(path);
            if (st.isPresent() && st.get().type() != FileStat.Type.FILE && !st.get().isDirectory()) {
                boolean regular = st.get().type() == FileStat.Type.SYMLINK
                        && env.exec(ExecRequest.of("[ -f " + Shell.quote(st.get().path()) + " ]")).exitCode() == 0;
                if (!regular) {
                    String what = st.get().type() == FileStat.Type.SYMLINK
                            ? "a link to something other than a regular file" : "not a regular file (a FIFO, device or socket)";
                    throw new ConfigurationException(path + " is " + what + ", which may never end; read refuses it"
                            + " unless you pass --any-file");
                }
            }
        }
        return env.files().read(path);
    }
}
