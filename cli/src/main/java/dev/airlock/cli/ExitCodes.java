package dev.airlock.cli;

import dev.airlock.AirlockException;
import picocli.CommandLine;

import java.io.PrintStream;

/**
 * The one place where failures become exit codes and the one stderr line {@code airlock: <kind>: <message>}.
 * {@code exec} keeps 0-255 for the command itself, so every Airlock failure there is 125.
 */
final class ExitCodes {
    static final int OK = 0;
    static final int OTHER = 1;
    static final int USAGE = 2;
    static final int DENIED = 3;
    static final int UNAVAILABLE = 4;
    static final int LEAK = 5;
    static final int EXEC_TIMEOUT = 124;
    static final int EXEC_FAILED = 125;
    /** What a shell reports for a process ended by SIGPIPE: the reader of our stdout went away. */
    static final int BROKEN_PIPE = 128 + 13;

    private ExitCodes() {
    }

    /** The code for a failure of this kind in a command other than exec. */
    static int forKind(String kind) {
        return switch (kind) {
            case "usage" -> USAGE;
            case "denied" -> DENIED;
            case "unavailable" -> UNAVAILABLE;
            default -> OTHER;
        };
    }

    static String kind(Throwable t) {
        if (t instanceof AirlockException a) {
            return a.kind();
        }
        if (t instanceof CommandLine.ParameterException) {
            return "usage";
        }
        return "error";
    }

    /** Prints the failure as one line (plus the stack trace with --debug) and returns its exit code. */
    static int report(Throwable t, boolean exec, boolean debug, PrintStream err) {
        String kind = kind(t);
        err.println(line(kind, message(t)));
        if (debug) {
            t.printStackTrace(err);
        }
        err.flush();
        return exec ? EXEC_FAILED : forKind(kind);
    }

    /** {@code airlock: denied: ...}; a plain failure (kind "error", or none) has no kind word. */
    static String line(String kind, String message) {
        return "airlock: " + (kind.isEmpty() || kind.equals("error") ? "" : kind + ": ") + message;
    }

    private static String message(Throwable t) {
        String m = t.getMessage();
        if (m == null || m.isBlank()) {
            m = t.getClass().getSimpleName();
        }
        // Exactly one line, whatever the message looked like.
        return m.strip().replaceAll("\\s*\\R\\s*", " ");
    }
}
