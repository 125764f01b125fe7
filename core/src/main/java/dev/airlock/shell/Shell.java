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

    /** {@code quote(path)} but never starting with {@code -} (prefixed with {@code ./} when relative). */
    public static String quotePath(String path) {
        return quote(path.startsWith("-") ? "./" + path : path);
    }
}
