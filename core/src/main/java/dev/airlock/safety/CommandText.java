package dev.airlock.safety;

import java.text.Normalizer;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The readings of a command text the guard judges. A shell runs the raw bytes, but an agent may
 * hide a command behind look-alikes or terminal escapes, and stripping can also hide a separator
 * inside a fake escape sequence. So the guard judges every reading and keeps the strictest verdict.
 */
final class CommandText {
    private CommandText() {
    }

    /** The distinct readings of {@code raw}: as the shell sees it (NUL dropped or as a break) and normalised. */
    static Set<String> readings(String raw) {
        Set<String> out = new LinkedHashSet<>();
        String marksOut = neutraliseMarks(raw);
        out.add(marksOut.replace("\0", ""));
        out.add(marksOut.replace('\0', '\n'));
        out.add(normalise(marksOut));
        return out;
    }

    /** NFKC, ANSI/OSC escape sequences, NUL, invisible and other control characters removed. */
    static String normalise(String s) {
        String t = stripEscapes(s);
        t = Normalizer.normalize(t, Normalizer.Form.NFKC);
        StringBuilder b = new StringBuilder(t.length());
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            if (c == '\n' || c == '\t') {
                b.append(c);
            } else if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || invisible(c)) {
                continue;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static boolean invisible(char c) {
        return (c >= '\u200b' && c <= '\u200f') || (c >= '\u202a' && c <= '\u202e')
                || (c >= '\u2060' && c <= '\u2064') || (c >= '\u2066' && c <= '\u2069')
                || c == '\ufeff' || c == '\u00ad' || c == '\u034f' || c == '\u180e';
    }

    /** Removes CSI, OSC, DCS-style and two-character escape sequences (7-bit and C1 forms). */
    static String stripEscapes(String s) {
        StringBuilder b = new StringBuilder(s.length());
        int n = s.length();
        int i = 0;
        while (i < n) {
            char c = s.charAt(i);
            if (c == 0x1b && i + 1 < n) {
                char d = s.charAt(i + 1);
                if (d == '[') {
                    i = skipCsi(s, i + 2);
                } else if (d == ']' || d == 'P' || d == 'X' || d == '^' || d == '_') {
                    i = skipString(s, i + 2);
                } else {
                    i += 2;
                }
            } else if (c == '\u009b') {
                i = skipCsi(s, i + 1);
            } else if (c == '\u009d') {
                i = skipString(s, i + 1);
            } else {
                b.append(c);
                i++;
            }
        }
        return b.toString();
    }

    private static int skipCsi(String s, int i) {
        int n = s.length();
        while (i < n && s.charAt(i) >= 0x20 && s.charAt(i) <= 0x3f) {
            i++;
        }
        if (i < n && s.charAt(i) >= 0x40 && s.charAt(i) <= 0x7e) {
            i++;
        }
        return i;
    }

    private static int skipString(String s, int i) {
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (c == 0x07 || c == '\u009c') {
                return i + 1;
            }
            if (c == 0x1b && i + 1 < n && s.charAt(i + 1) == '\\') {
                return i + 2;
            }
            i++;
        }
        return i;
    }

    private static String neutraliseMarks(String s) {
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            if (Marks.isMark(s.charAt(i))) {
                if (b == null) {
                    b = new StringBuilder(s);
                }
                b.setCharAt(i, Marks.UNKNOWN);
            }
        }
        return b == null ? s : b.toString();
    }
}
