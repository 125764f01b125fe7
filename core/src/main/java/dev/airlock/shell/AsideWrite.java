package dev.airlock.shell;

import dev.airlock.WriteOptions;

/**
 * The shell steps of an atomic write that every route shares, the core's shell write and a
 * backend's native upload alike: the content sits in a temp file {@code $tmp} in the target's
 * physical directory (the current one), the target's name is {@code $n}; these lines give
 * {@code $tmp} its mode, check its size and rename it over {@code $n}, and remove the directories
 * a failed write made. One place, so that every route keeps the same modes, messages and exits.
 */
public final class AsideWrite {
    private AsideWrite() {
    }

    /** The prefix of every temp file a write puts beside its target. */
    public static final String TEMP_PREFIX = ".airlock-write-";

    /**
     * A native write's first script: judges the place of {@code t} and makes the temp sibling
     * (0600, by {@code mktemp}, so owned as the shell write's would be). A relative path is taken
     * from the current directory. Exits {@code useShell} when a symlink is at the target or on the
     * way to it (the guard judged the path as written; the shell write, which judges the physical
     * place too, takes over), then runs {@code checks} (lines that may exit {@code useShell} too,
     * with {@code $e} the physical existing ancestor, {@code $d} the parent, {@code $t} the target),
     * then makes the parents if asked (else exit 2), refuses a directory (exit 5), and prints the
     * physical directory, the name, the temp file's name and the first directory made (empty if
     * none), NUL-separated, then what {@code report} prints (lines run there, {@code $tmp} set).
     */
    public static String enter(String t, boolean createParents, int useShell, String checks, String report) {
        StringBuilder s = new StringBuilder();
        s.append("t=").append(Shell.quotePath(t)).append('\n')
                .append("case $t in /*) ;; *) t=${PWD%/}/$t ;; esac\n")
                .append("[ -L \"$t\" ] && exit ").append(useShell).append('\n')
                .append("d=$(dirname -- \"$t\") && n=$(basename -- \"$t\") || exit 4\n")
                .append("e=$d; while [ ! -d \"$e\" ] && [ \"$e\" != / ]; do e=$(dirname -- \"$e\"); done\n")
                .append("[ \"$(cd -P -- \"$e\" && pwd -P)\" = \"$e\" ] || exit ").append(useShell).append('\n')
                .append(checks)
                .append("made=\n");
        if (createParents) {
            s.append("if [ \"$e\" != \"$d\" ]; then mkdir -p -- \"$d\" || exit 4; made=$e; fi\n");
        } else {
            s.append("[ -d \"$d\" ] || exit 2\n");
        }
        return s.append("[ -d \"$t\" ] && { echo ").append(Shell.quote("is a directory: " + t)).append(" >&2; exit 5; }\n")
                .append("cd -P -- \"$d\" || exit 4\n")
                .append("tmp=$(umask 077 && mktemp ./" + TEMP_PREFIX + "XXXXXXXXXX) || exit 6\n")
                .append("printf '%s\\0%s\\0%s\\0%s' \"$(pwd -P)\" \"$n\" \"${tmp#./}\" \"$made\"\n")
                .append(report)
                .toString();
    }

    /**
     * The NUL-separated fields {@link #enter} printed: directory, name, temp file, first directory
     * made, then {@code extra} more; refused unless the first three are usable.
     */
    public static String[] places(byte[] stdout, int extra, String t) {
        String[] f = new String(stdout, java.nio.charset.StandardCharsets.UTF_8).split("\0", -1);
        if (f.length < 4 + extra || !f[0].startsWith("/") || f[1].isEmpty() || !f[2].startsWith(TEMP_PREFIX)) {
            throw new dev.airlock.BackendException("write to " + t + ": the target reported no usable directory");
        }
        return f;
    }

    /** Refuses a directory at the target: {@code is a directory: PATH}, exit 5. */
    public static String refuseDirectory(String shownPath) {
        return "[ -d \"$n\" ] && [ ! -L \"$n\" ] && { echo " + Shell.quote("is a directory: " + shownPath) + " >&2; exit 5; }\n";
    }

    /** Sets {@code $tmp}'s mode: the one asked for, else the existing file's, else 0666 less the umask (exit 8). */
    public static String mode(WriteOptions options) {
        if (options.mode().isPresent()) {
            return "chmod " + Integer.toOctalString(options.mode().getAsInt()) + " \"$tmp\" || exit 8\n";
        }
        return "if [ -f \"$n\" ] && [ ! -L \"$n\" ]; then m=$(stat -c %a -- \"$n\") || exit 8\n"
                + "else m=$(printf '%o' $(( 0666 & ~0$(umask) ))); fi\n"
                + "chmod \"$m\" \"$tmp\" || exit 8\n";
    }

    /**
     * Puts {@code $tmp}'s size into {@code $c}; with {@code expected >= 0}, anything else is
     * {@code wrote C of N bytes}, exit 9. {@code stat}, not {@code wc -c}: busybox's wc reads the
     * whole file (a third of a second for 64 MiB here), stat asks the inode.
     */
    public static String checkSize(long expected) {
        String count = "c=$(stat -c %s -- \"$tmp\") || exit 9\n";
        if (expected < 0) {
            return count;
        }
        return count + "[ \"$c\" = " + expected + " ] || { echo \"wrote $c of " + expected + " bytes\" >&2; exit 9; }\n";
    }

    /**
     * Renames {@code $tmp} over {@code $n}, refusing first (exit 11) a symlink at the name and (exit
     * {@link SpecialFiles#REFUSED}) a device, FIFO or socket. {@code -T}: a link planted at the name
     * after that check is replaced, never followed into a directory (busybox mv may lack it). The plain mv only where {@code -T}
     * is missing: when the name became a directory meanwhile (a concurrent command), plain mv would
     * move the temp file into it and report a write that is not at the path (exit 10).
     */
    public static String rename(String shownPath) {
        // Checked at the last moment before the replace (SpecialFiles): never a device, FIFO or
        // socket, and never a link, which no route leaves at the name (a link is followed first).
        return "[ -L \"$n\" ] && { echo " + Shell.quote("a symlink appeared at " + shownPath
                + " while writing; nothing was written (write again)") + " >&2; exit 11; }\n"
                + SpecialFiles.check("write to", "\"$n\"", Shell.quote(shownPath))
                + "mv -fT -- \"$tmp\" \"$n\" 2>/dev/null || { [ ! -d \"$n\" ] && mv -f -- \"$tmp\" \"$n\"; } || { [ -d \"$n\" ]"
                + " && echo " + Shell.quote("is a directory (made while writing): " + shownPath) + " >&2; exit 10; }\n";
    }

    /**
     * A failed native write's clean-up: in {@code dir}, {@code rm -f -- RM_ARGS} (shell words,
     * already quoted), then the directories it made from {@code createdFrom} (empty: none), also
     * when {@code dir} itself is gone by now.
     */
    public static String cleanUp(String dir, String createdFrom, String rmArgs) {
        return "if cd -P -- " + Shell.quotePath(dir) + "; then rm -f -- " + rmArgs + "; fi\n"
                + (createdFrom.isEmpty() ? "" : removeMade(dir, createdFrom)) + "exit 0\n";
    }

    /**
     * Removes the (empty) directories a write made, deepest first, from {@code dir} up to
     * {@code createdFrom}, which existed; one already gone is passed over, one no longer empty
     * stops it.
     */
    public static String removeMade(String dir, String createdFrom) {
        return "c=" + Shell.quote(dir) + "\ne=" + Shell.quote(createdFrom) + "\n" + removeMadeLoop();
    }

    /**
     * {@link #removeMade}'s loop, from the directory in {@code $c} up to the one in {@code $e}. It
     * holds no single quote, so a script's exit trap can carry it ({@code trap '... LOOP' EXIT}).
     */
    public static String removeMadeLoop() {
        return "while [ \"$c\" != \"$e\" ] && [ \"$c\" != / ]; do\n"
                + "    if [ -e \"$c\" ] || [ -L \"$c\" ]; then rmdir -- \"$c\" 2>/dev/null || break; fi\n"
                + "    c=$(dirname -- \"$c\")\ndone\n";
    }
}
