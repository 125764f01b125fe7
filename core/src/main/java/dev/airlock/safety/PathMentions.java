package dev.airlock.safety;

import java.util.ArrayList;
import java.util.List;

/**
 * The paths a word mentions, for a command the guard cannot read: the word split where a path
 * cannot go on (blanks, quotes, {@code = , : ; ( ) < > | &}), each piece that is absolute (an
 * option's attached value {@code -o/x} too), or that names a protected file by a relative name
 * ({@code .ssh/x} in a home). In text another program interprets (code, ex commands, a remote
 * command) a leading {@code ~} is that program's home, so it is expanded too.
 */
final class PathMentions {
    private PathMentions() {
    }

    private static final String BREAKS = " \t\n\r'\"=,:;()<>|&`{}[]";

    /** @param home the home for {@code ~} in text a program expands, or null for plain arguments */
    static List<String> in(String word, String home) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (int i = 0; i <= word.length(); i++) {
            char c = i < word.length() ? word.charAt(i) : ' ';
            if (BREAKS.indexOf(c) >= 0) {
                piece(cur.toString(), home, out);
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        return out;
    }

    private static void piece(String p, String home, List<String> out) {
        if (p.isEmpty() || p.charAt(0) == Marks.UNKNOWN) {
            return;
        }
        String t = p;
        if (t.startsWith("-")) {
            int slash = t.indexOf('/');
            if (slash < 0) {
                return;
            }
            t = t.substring(slash);
        }
        if (t.startsWith("//")) {
            return; // a URL's authority (https://host/...), not a path
        }
        if (home != null && (t.equals("~") || t.startsWith("~/"))) {
            out.add(home + t.substring(1));
        } else if (t.startsWith("/")) {
            out.add(t);
        } else if (ProtectedPaths.namesProtected(t)) {
            out.add(t);
        }
    }
}
