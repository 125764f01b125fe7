package dev.airlock.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Whether one of our standard descriptors is a terminal (isatty), which System.console() cannot tell per descriptor. */
final class Terminals {
    static final int STDIN = 0;
    static final int STDERR = 2;

    private Terminals() {
    }

    static boolean isTerminal(int fd) {
        try {
            String target = Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty") || target.equals("/dev/console");
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            // No /proc (not Linux): the console exists only when stdin and stdout both are terminals.
            return System.console() != null;
        }
    }
}
