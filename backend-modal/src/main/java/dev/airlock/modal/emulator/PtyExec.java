package dev.airlock.modal.emulator;

import dev.airlock.modal.proto.PTYInfo;
import dev.airlock.shell.Shell;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An exec with {@code pty_info.enabled}, as the service runs it: under a real pseudo-terminal, so
 * {@code tty} names it, stdout and stderr come merged on stdout, and the terminal's output
 * processing turns {@code \n} into {@code \r\n}. Made with util-linux's {@code script -q -e -c},
 * run inside the sandbox (which mounts its own devpts instance): script allocates the terminal,
 * makes it the command's controlling one in a new session, copies the exec's stdin into it and
 * its output to script's stdout, and exits with the command's status (a signal N as 128+N, as
 * script reports it). The size comes from {@code winsz_rows}/{@code winsz_cols} ({@code stty}
 * in the terminal before the command), {@code TERM}, {@code COLORTERM} and {@code TERM_PROGRAM}
 * from the request when it sets them.
 */
final class PtyExec {
    /** script runs its {@code -c} text with {@code $SHELL}: a POSIX shell, the client's {@code SHELL} restored in it. */
    private static final String SH = "/bin/sh";

    private PtyExec() {
    }

    /** Whether {@code info} asks for a terminal. */
    static boolean wanted(Optional<PTYInfo> info) {
        return info.map(PTYInfo::getEnabled).orElse(false);
    }

    /** The argv that runs {@code argv} under a terminal of {@code info}'s size. */
    static List<String> argv(List<String> argv, PTYInfo info, Map<String, String> env) {
        StringBuilder sh = new StringBuilder();
        if (info.getWinszRows() > 0 && info.getWinszCols() > 0) {
            sh.append("stty rows ").append(info.getWinszRows()).append(" cols ").append(info.getWinszCols()).append(" 2>/dev/null; ");
        }
        String shell = env.get("SHELL");
        sh.append(shell == null ? "unset SHELL; " : "SHELL=" + Shell.quote(shell) + "; export SHELL; ");
        sh.append("exec");
        for (String a : argv) {
            sh.append(' ').append(Shell.quote(a));
        }
        return List.of("script", "-q", "-e", "-c", sh.toString(), "/dev/null");
    }

    /** The exec's environment under the terminal: the terminal's variables, and the shell script runs. */
    static Map<String, String> env(Map<String, String> env, PTYInfo info) {
        Map<String, String> e = new java.util.HashMap<>(env);
        putIfSet(e, "TERM", info.getEnvTerm());
        putIfSet(e, "COLORTERM", info.getEnvColorterm());
        putIfSet(e, "TERM_PROGRAM", info.getEnvTermProgram());
        e.put("SHELL", SH);
        return e;
    }

    private static void putIfSet(Map<String, String> env, String name, String value) {
        if (!value.isEmpty()) {
            env.put(name, value);
        }
    }
}
