package dev.airlock.shell;

/**
 * The launcher protocol's script side, the one every shell backend runs: after the staging lines
 * succeeded and right before the command, the shell prints one record,
 * {@code \n@airlock:NONCE:PID:START:ok\n}, with a per-exec nonce, its pid (the process group it
 * leads under {@code setsid}) and that pid's start time from {@code /proc} (empty where there is
 * none), on stdout and (on a stream transport) on stderr too, so that what a login shell printed
 * before it on either stream is not taken for the command's output. The core's one parser is
 * {@link dev.airlock.exec.LaunchRecordStream}; the exit status always comes from the transport,
 * never from text.
 */
public final class Launcher {
    private Launcher() {
    }

    /**
     * The signals whose default disposition the launcher restores for the command: a shell cannot
     * ({@code trap -} does nothing for a signal ignored on entry), so a JVM started under
     * {@code nohup} would otherwise hand its children an ignored SIGHUP.
     */
    public static final String DEFAULT_SIGNALS = "HUP,INT,QUIT,PIPE,TERM";

    /**
     * The argv prefix that restores them, for a backend that starts the shell with an argv: GNU
     * {@code env --default-signal} (coreutils 8.31 and later). Put it right before the shell.
     */
    public static java.util.List<String> defaultSignalsArgv(String env) {
        return java.util.List.of(env, "--default-signal=" + DEFAULT_SIGNALS);
    }

    /**
     * The line right after the record on a stream transport: a copy of the transport's stdout on
     * descriptor 9, which every process the command starts inherits. A background job that sent
     * its own output elsewhere ({@code server >log 2>&1 &}) still holds the transport open, so the
     * core sees it left something running, and ends it with the exec, on every backend alike. (A
     * command that closes descriptor 9 on purpose hides its jobs from this; the kernel-enforced
     * containment, not this line, is what holds against such a command.)
     */
    public static final String HOLD_TRANSPORT = "exec 9>&1\n";

    /** A fresh nonce: 128 random bits, unguessable by the command. */
    public static String nonce() {
        return StdinScripts.randomToken();
    }

    /**
     * The record line, on stdout only: for a backend whose stderr is a file of its own (the FILES
     * output transport), where nothing but the command writes. Builtins only ({@code read},
     * {@code set}, {@code printf}), so a request's {@code PATH} cannot break it; the positional
     * parameters it borrows are empty again after.
     */
    public static String recordLine(String nonce) {
        return record(nonce, false);
    }

    /**
     * The record on stdout, then the same record on stderr: a stream transport carries whatever a
     * remote user's startup files print on either stream before the script runs (a {@code ~/.bashrc}
     * that sshd makes bash read; {@code pyenv rehash} racing its siblings prints to stderr), and the
     * core drops what came before the record on each.
     */
    public static String recordLines(String nonce) {
        return record(nonce, true);
    }

    private static String record(String nonce, boolean onStderrToo) {
        if (!nonce.matches("[0-9a-f]{8,64}")) {
            throw new IllegalArgumentException("a launcher nonce is lowercase hex");
        }
        String print = "printf '\\n@airlock:%s:%s:%s:ok\\n' " + nonce + " \"$$\" \"$airlock_s\"";
        return "airlock_s=\n"
                + "if [ -r /proc/$$/stat ]; then read -r airlock_s </proc/$$/stat; airlock_s=${airlock_s##*) };"
                + " set -- $airlock_s; airlock_s=${20}; set --; fi\n"
                + print + (onStderrToo ? "; " + print + " >&2" : "") + "; unset airlock_s\n";
    }
}
