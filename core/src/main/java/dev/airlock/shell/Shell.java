package dev.airlock.shell;

/** POSIX shell quoting: the one place Airlock turns a value into shell text. */
public final class Shell {
    private Shell() {
    }

    /**
     * Quotes {@code s} as one word for any POSIX shell: single quotes, with each {@code '} written
     * as {@code '\''}. Safe for spaces, quotes, a leading {@code -} (use {@code --} too), newlines,
     * {@code $}, backslashes and non-ASCII. NUL cannot be represented and is refused.
     */
    public static String quote(String s) {
        if (s.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("a shell word cannot contain a NUL byte");
        }
        if (!s.isEmpty() && s.chars().allMatch(Shell::isSafe)) {
            return s;
        }
        return "'" + s.replace("'", "'\\''") + "'";
    }

    private static boolean isSafe(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '/' || c == '.' || c == '_' || c == '+' || c == ':' || c == ',' || c == '@' || c == '%'
                || c == '=' || c == '-';
    }

    /**
     * Signals a whole process group: {@code kill -TERM -PGID}. The one spelling that bash, dash
     * and busybox all accept ({@code kill -s TERM -PGID} fails in dash, {@code --} in busybox).
     */
    public static String killProcessGroup(String signal, long pgid) {
        if (!signal.matches("[A-Z]+") || pgid <= 1) {
            throw new IllegalArgumentException("bad signal or process group: " + signal + " " + pgid);
        }
        return "kill -" + signal + " -" + pgid;
    }

    /** {@code quote(path)} but never starting with {@code -} (prefixed with {@code ./} when relative). */
    public static String quotePath(String path) {
        return quote(path.startsWith("-") ? "./" + path : path);
    }

    /**
     * Reads a process group with builtins only: {@code gone}, or {@code alive START} where START is
     * the leader's start time from {@code /proc} (empty when the leader is gone or there is no /proc).
     */
    public static String groupStateScript(long pgid) {
        if (pgid <= 1) {
            throw new IllegalArgumentException("bad process group: " + pgid);
        }
        // kill -0 also answers for a group of zombies (children nobody reaped yet, which no signal
        // reaches): where /proc shows the members, a group without one live member counts as gone,
        // so no needless SIGKILL follows the SIGTERM that ended it.
        return "if kill -0 -" + pgid + " 2>/dev/null; then\n"
                + "if [ -r /proc/self/stat ]; then\n" + liveMember(Long.toString(pgid))
                + "[ -n \"$live\" ] || { echo gone; exit 0; }; fi\n"
                + "s=\n"
                + "if [ -r /proc/" + pgid + "/stat ]; then read -r s </proc/" + pgid + "/stat; s=${s##*) }; set -- $s; s=${20}; fi\n"
                + "echo \"alive $s\"\nelse echo gone\nfi\n";
    }

    /**
     * Exits 1 when the process group whose id is in {@code $g} has a live member, 0 when it has
     * none (zombies, children nobody reaped yet, are not live: no signal reaches them), as
     * {@link #groupStateScript} judges it.
     */
    public static String groupHasLiveMemberScript() {
        return "kill -0 -\"$g\" 2>/dev/null || exit 0\n"
                + "[ -r /proc/self/stat ] || exit 1\n"
                + liveMember("\"$g\"")
                + "[ -n \"$live\" ] && exit 1\nexit 0\n";
    }

    /** Sets {@code live=1} when {@code /proc} shows a member of group {@code pgidWord} (a shell word) that is no zombie. */
    private static String liveMember(String pgidWord) {
        return "live=\n"
                + "for f in /proc/[0-9]*/stat; do read -r l <\"$f\" 2>/dev/null || continue; l=${l##*) }; set -- $l\n"
                + "if [ \"$3\" = " + pgidWord + " ] && [ \"$1\" != Z ] && [ \"$1\" != X ]; then live=1; break; fi; done\n";
    }

    /**
     * Finds an exec's process group by its launcher nonce, for when the launcher record never
     * arrived (the connection was lost right after the command started): prints {@code PID PPID
     * START} for each process group leader whose command line holds the nonce (the command's shell
     * runs {@code SHELL -c SCRIPT}, and the script holds the record line). The nonce is split in
     * the script's own text, so this script's shell never matches; {@code grep}, which holds it
     * whole, leads no group. Prints nothing where there is no {@code /proc}.
     */
    public static String leadersByNonceScript(String nonce) {
        if (!nonce.matches("[0-9a-f]{8,64}")) {
            throw new IllegalArgumentException("a launcher nonce is lowercase hex");
        }
        int half = nonce.length() / 2;
        return "n='" + nonce.substring(0, half) + "''" + nonce.substring(half) + "'\n"
                + "[ -r /proc/self/stat ] || exit 0\n"
                + "for f in $(grep -lsF -- \"$n\" /proc/[0-9]*/cmdline 2>/dev/null); do p=${f#/proc/}; p=${p%/cmdline}\n"
                + "read -r l 2>/dev/null </proc/$p/stat || continue; l=${l##*) }; set -- $l\n"
                + "[ \"$3\" = \"$p\" ] && echo \"$p $2 ${20}\"; done\nexit 0\n";
    }

    /** Stages stdin into a 0600 file at {@code path}: the shell implementation of a stager's upload. */
    public static String stageScript(String path) {
        return "umask 077\ncat > " + quotePath(path) + "\n";
    }

    /**
     * Writes {@code text} to {@code path} with mode 0600 from the script itself, and prints
     * {@code ok} when it did. Only where {@code printf} is the shell's builtin (dash, bash, busybox,
     * ksh, zsh), so the text never reaches a process's argv: for a builtin {@code command -v}
     * prints the bare name, for a program its path, and then the script writes nothing.
     */
    public static String stageTextScript(String path, String text) {
        return "[ \"$(command -v printf)\" = printf ] || exit 1\numask 077\nprintf '%s' " + quote(text) + " > "
                + quotePath(path) + " && echo ok\n";
    }

    /** Removes a staged file; succeeds when it is already gone. */
    public static String removeScript(String path) {
        return "rm -f -- " + quotePath(path) + "\n";
    }

    /** Sends {@code signal} to the process group and always succeeds (a gone group is no error). */
    public static String signalGroupScript(String signal, long pgid) {
        return killProcessGroup(signal, pgid) + " 2>/dev/null\nexit 0\n";
    }
}
