package dev.airlock.session;

import dev.airlock.shell.Shell;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The one spelling of a session in shell: what the exec core runs around a session's command.
 * Before it: remember the environment the shell got at launch, source the snapshot, re-apply the
 * request's own variables, enter the recorded directory. After it, from an EXIT trap (so that
 * {@code exit N} saves too and still exits N): write the new snapshot to a temp file with mode
 * 0600 and rename it over the old one, so a reader or the next exec never sees a torn or empty
 * one. Nothing is printed on stdout and no marker is added to it: the working directory is
 * recorded in the snapshot file. Builtins and {@code awk}, {@code mkdir}, {@code mv}, {@code rm}
 * only, found on the launch PATH even when the session changed its own.
 */
public final class SessionScript {
    /** The snapshot's name in the session's directory. */
    public static final String SNAPSHOT = "snapshot";
    /** The snapshot's last line: a reader that sees it has the whole file. */
    public static final String COMPLETE = "__airlock_complete=1";
    /** Exit status when the target has no {@code awk} (the command did not run). */
    public static final int NO_AWK = 127;

    /**
     * Never saved: Airlock's own variables (containment sets HOME and the scratch TMPDIR for each
     * environment, so an old value must not come back; {@code AIRLOCK_*} is left out by the awk
     * program), and what each shell sets for itself ({@code PWD} is the recorded directory).
     */
    static final String NEVER_SAVED = " HOME TMPDIR TMP TEMP _ SHLVL PWD SHELLOPTS BASHOPTS PPID UID EUID BASH_VERSINFO ";

    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final String AWK = loadAwk();
    private static final String TOOLS = "PATH=$__airlock_path ";
    private static final String REAL_VALUES = "__AIRLOCK_V_LC_ALL=${LC_ALL+x$LC_ALL} __AIRLOCK_V_PATH=${PATH+x$PATH} LC_ALL=C ";

    private SessionScript() {
    }

    /** The snapshot's path in the session directory {@code dir}. */
    public static String snapshotPath(String dir) {
        return dir + "/" + SNAPSHOT;
    }

    /**
     * {@code command} inside the session whose state lives in {@code dir} on the target.
     *
     * @param bash       whether the target's shell is bash (then functions and aliases are kept too)
     * @param requestEnv the names of the request's own variables: they win over the session's for
     *                   this exec, and are saved only when the command changed them
     * @param requestCwd whether the request enters a directory of its own (then not the session's)
     */
    public static String wrap(String command, String dir, boolean bash, Collection<String> requestEnv, boolean requestCwd) {
        for (String n : requestEnv) {
            if (!NAME.matcher(n).matches()) {
                throw new IllegalArgumentException("not a shell variable name: " + n);
            }
        }
        StringBuilder s = new StringBuilder(AWK.length() + 2048 + command.length());
        s.append("__airlock_sd=").append(Shell.quotePath(dir)).append('\n');
        s.append("__airlock_awk=").append(Shell.quote(AWK)).append('\n');
        s.append("__airlock_path=$PATH:/usr/bin:/bin\n");
        s.append("__airlock_base=$(").append(REAL_VALUES).append(TOOLS).append(awk("dump")).append(" </dev/null) || {"
                + " printf 'airlock: a session needs awk on the target\\n' >&2; exit " + NO_AWK + "; }\n");
        for (String n : requestEnv) {
            s.append("__airlock_r_").append(n).append("=${").append(n).append("-}\n");
        }
        s.append("__airlock_owned=\n");
        if (bash) {
            s.append("shopt -s expand_aliases\n");
        }
        s.append("if [ -f \"$__airlock_sd/" + SNAPSHOT + "\" ]; then command . \"$__airlock_sd/" + SNAPSHOT + "\"; fi\n");
        for (String n : requestEnv) {
            // Was it the session's own? Keep that value to restore at exit, then let the request's win.
            s.append("__airlock_o_").append(n).append("=; case \"\n$__airlock_owned\" in *\"\n+").append(n)
                    .append("\n\"*) __airlock_o_").append(n).append("=1; __airlock_s_").append(n).append("=${").append(n)
                    .append("-};; esac; export ").append(n).append("=\"$__airlock_r_").append(n).append("\"\n");
        }
        if (!requestCwd) {
            s.append("if [ -n \"${__airlock_cwd-}\" ]; then command cd -- \"$__airlock_cwd\" 2>/dev/null || printf"
                    + " 'airlock: the session directory %s is gone; staying in %s\\n' \"$__airlock_cwd\" \"$PWD\" >&2; fi\n");
        }
        s.append("trap ").append(Shell.quote(exitTrap(bash, requestEnv))).append(" EXIT\n");
        s.append(command);
        return s.toString();
    }

    /** The EXIT trap: save the state atomically, then exit with the command's status. */
    private static String exitTrap(boolean bash, Collection<String> requestEnv) {
        StringBuilder t = new StringBuilder();
        // Stderr is the trap's own from here: a command a timeout or cancel killed (TERM to the
        // group) leaves bash alive for this trap, and bash would report the killed foreground job
        // ("Terminated") on the command's stderr while the trap forks. The trap's one line of its
        // own goes to the saved descriptor 8.
        t.append("__airlock_rc=$?\nexec 8>&2 2>/dev/null\nset +euC\n");
        for (String n : requestEnv) {
            // Unchanged by the command: the request's value was for this exec only.
            t.append("if [ \"${").append(n).append("-}\" = \"$__airlock_r_").append(n).append("\" ] && [ -n \"$__airlock_o_")
                    .append(n).append("\" ]; then ").append(n).append("=$__airlock_s_").append(n).append("; fi\n");
        }
        t.append("umask 077\n");
        t.append("__airlock_t=$__airlock_sd/" + SNAPSHOT + ".$$.tmp\n");
        // The directory exactly, even one whose name ends in a newline.
        t.append("__airlock_c=$(command pwd; echo .); __airlock_c=${__airlock_c%?.}\n");
        t.append("if { [ -d \"$__airlock_sd\" ] || ").append(TOOLS).append("command mkdir -p -- \"$__airlock_sd\"; } && {"
                + " printf '%s\\n%s' \"$__airlock_base\" \"$__airlock_owned\" | __AIRLOCK_CWD=$__airlock_c ")
                .append(REAL_VALUES).append(TOOLS).append(awk("save"));
        if (bash) {
            t.append(" && declare -f && alias -p");
        }
        t.append(" && printf '%s\\n' " + COMPLETE + "; } >\"$__airlock_t\" && ").append(TOOLS)
                .append("command mv -f -- \"$__airlock_t\" \"$__airlock_sd/" + SNAPSHOT + "\"\n");
        t.append("then :; else ").append(TOOLS).append("command rm -f -- \"$__airlock_t\";"
                + " printf 'airlock: the session state could not be saved in %s\\n' \"$__airlock_sd\" >&8; fi\n");
        t.append("exit \"$__airlock_rc\"\n");
        return t.toString();
    }

    private static String awk(String mode) {
        return "command awk -v m=" + mode + " -v x=" + Shell.quote(NEVER_SAVED) + " \"$__airlock_awk\"";
    }

    private static String loadAwk() {
        try (InputStream in = SessionScript.class.getResourceAsStream("snapshot.awk")) {
            if (in == null) {
                throw new IllegalStateException("snapshot.awk is missing from airlock-core");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .filter(l -> !l.startsWith("#")).collect(Collectors.joining("\n", "", "\n"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
