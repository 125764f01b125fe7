package dev.airlock.shell;

import java.util.Optional;

/**
 * The rule every file route shares (issue 31, door 4): an Airlock write or delete never replaces
 * or removes a character or block device, a FIFO or a socket, reached directly, through a symlink
 * or inside a tree to delete. Such an entry belongs to the system or to a running program:
 * {@code /dev/urandom} swapped for a regular file feeds every later reader the agent's bytes. A
 * write through a symlink to a regular file goes on (the link stays, as {@link dev.airlock.RemoteFiles}
 * promises), and deleting a link removes the link only; a link that leads to one of these is
 * refused like the entry itself ({@code /dev/stdin}). One class holds the kinds, the message and
 * the shell check, so the shell route and the native routes refuse alike.
 */
public final class SpecialFiles {
    /** The exit status of a script that refused. */
    public static final int REFUSED = 12;

    private static final String MIDDLE = " refused: it is ";
    private static final String END = ", which Airlock never replaces or removes; name a regular file"
            + " (run a command, under the guard, if you mean to change it)";

    private SpecialFiles() {
    }

    /**
     * The kind of entry whose {@code st_mode} is {@code mode} (only its {@code S_IFMT} bits count), or
     * empty for a regular file, a directory or a symlink.
     */
    public static Optional<String> kind(int mode) {
        return switch (mode & 0170000) {
            case 0020000 -> Optional.of("a character device");
            case 0060000 -> Optional.of("a block device");
            case 0010000 -> Optional.of("a FIFO");
            case 0140000 -> Optional.of("a socket");
            default -> Optional.empty();
        };
    }

    /** The one-line refusal: the operation and path, what the entry is, and what to do instead. */
    public static String message(String operation, String path, String kind) {
        return operation + " " + path + MIDDLE + kind + END;
    }

    /**
     * Shell lines that refuse, printing {@link #message} and exiting {@link #REFUSED}, when
     * {@code entry} (a double-quoted shell word such as {@code "$p"}; a symlink is followed) is
     * one of these kinds; {@code shown} is the path the message names (a shell word too).
     */
    public static String check(String operation, String entry, String shown) {
        return "k=; if [ -c " + entry + " ]; then k='a character device'; elif [ -b " + entry + " ]; then k='a block device';"
                + " elif [ -p " + entry + " ]; then k='a FIFO'; elif [ -S " + entry + " ]; then k='a socket'; fi\n"
                + "[ -z \"$k\" ] || { printf '%s%s%s%s%s\\n' " + Shell.quote(operation + " ") + " " + shown + " "
                + Shell.quote(MIDDLE) + " \"$k\" " + Shell.quote(END) + " >&2; exit " + REFUSED + "; }\n";
    }

    /**
     * Shell lines for a delete of {@code "$p"}: refuse when it is (or leads to) one of these kinds,
     * or when a directory (not a link to one) holds one anywhere below; the message names the entry found.
     */
    public static String deleteCheck() {
        return check("delete", "\"$p\"", "\"$p\"")
                + "if [ -d \"$p\" ] && [ ! -L \"$p\" ]; then\n"
                + "  f=$(find \"$p\" \\( -type c -o -type b -o -type p -o -type s \\) -print 2>/dev/null | head -n 1)\n"
                + "  if [ -n \"$f\" ]; then\n"
                + check("delete", "\"$f\"", "\"$f\"")
                // a name the line-wise find output could not carry (a newline in it): refused all the same
                + "    printf '%s%s%s\\n' 'delete ' \"$p\" " + Shell.quote(MIDDLE + "a directory that holds a device, FIFO or socket" + END)
                + " >&2; exit " + REFUSED + "\n"
                + "  fi\n"
                + "fi\n";
    }
}
