package dev.airlock.shell;

/**
 * The launcher protocol's script side, the one every shell backend runs: after the staging lines
 * succeeded and right before the command, the shell prints one record on stdout,
 * {@code \n@airlock:NONCE:PID:START:ok\n}, with a per-exec nonce, its pid (the process group it
 * leads under {@code setsid}) and that pid's start time from {@code /proc} (empty where there is
 * none). The core's one parser is {@link dev.airlock.exec.LaunchRecordStream}; the exit status
 * always comes from the transport, never from text.
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

    /** A fresh nonce: 128 random bits, unguessable by the command. */
    public static String nonce() {
        return StdinScripts.randomToken();
    }

    /**
     * The record line. Builtins only ({@code read}, {@code set}, {@code printf}), so a request's
     * {@code PATH} cannot break it; the positional parameters it borrows are empty again after.
     */
    public static String recordLine(String nonce) {
        if (!nonce.matches("[0-9a-f]{8,64}")) {
            throw new IllegalArgumentException("a launcher nonce is lowercase hex");
        }
        return "airlock_s=\n"
                + "if [ -r /proc/$$/stat ]; then read -r airlock_s </proc/$$/stat; airlock_s=${airlock_s##*) };"
                + " set -- $airlock_s; airlock_s=${20}; set --; fi\n"
                + "printf '\\n@airlock:%s:%s:%s:ok\\n' " + nonce + " \"$$\" \"$airlock_s\"; unset airlock_s\n";
    }
}
