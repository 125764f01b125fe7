package dev.airlock.ssh;

import dev.airlock.shell.Shell;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * An exec channel opened at open, beside the control shell, whose login shell reads the user's
 * startup files while the probe runs, and which then waits for its command: the first launch
 * takes it instead of opening a channel of its own. Without it a CLI {@code exec} paid the user's
 * {@code ~/.bashrc} twice in a row (the control shell's login, then the command's); with it the
 * two logins overlap, so the command starts about one login after the connection, as
 * {@code ssh host CMD} does.
 *
 * <p>Its text is {@link SshBackend#commandText}'s wrapper behind one {@code read}: the first line
 * on its stdin holds the two words that text would carry (the shell, and the script as octal
 * escapes), and everything after that line is the command's own stdin ({@code read} takes a pipe
 * byte by byte, so nothing past the line is consumed). The command therefore runs in the very
 * process sshd started, after the same startup files, with the same environment and exit status
 * as through a channel of its own; only the startup files ran at open rather than when the
 * command came. End of input without a line ends it quietly (close).
 */
final class WarmChannel {
    private static final Logger LOG = LoggerFactory.getLogger(WarmChannel.class);

    private final SshProcess process;

    private WarmChannel(SshProcess process) {
        this.process = process;
    }

    /** The text the waiting channel runs: read the line, then what {@link SshBackend#commandText} runs. */
    static String waitingText() {
        return "exec sh -c 'IFS= read -r c || exit 0; eval \"set -- $c\"; " + SshBackend.wrapper() + "' sh";
    }

    /** The line that hands {@code script} to the waiting channel, run by {@code shell}; null when it cannot be one line. */
    static String line(String shell, String script) {
        String quoted = Shell.quote(shell);
        return quoted.indexOf('\n') >= 0 ? null : quoted + " '" + SshBackend.octalEscaped(script) + "'\n";
    }

    /** Opens the waiting channel: the environment's first channel, so its failure is the login's (see {@link SshBackend}). */
    static WarmChannel open(Connections connections) throws IOException {
        return new WarmChannel(connections.exec(waitingText().getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * Hands the command to the waiting channel and returns its process; null when the channel
     * ended or the line could not be sent (the command then certainly did not start, and the
     * waiting channel is released).
     */
    SshProcess start(String shell, String script) {
        String line = line(shell, script);
        if (line == null || process.ended()) {
            discard();
            return null;
        }
        try {
            OutputStream in = process.stdin();
            in.write(line.getBytes(StandardCharsets.UTF_8));
            in.flush();
            return process;
        } catch (IOException e) {
            LOG.debug("the waiting channel did not take its command: {}", e.getMessage());
            discard();
            return null;
        }
    }

    /** Ends the waiting shell unused: end of input, then the channel's release. */
    void discard() {
        try {
            process.stdin().close();
        } catch (IOException e) {
            LOG.debug("closing the waiting channel's input: {}", e.getMessage());
        }
        process.release();
    }
}
