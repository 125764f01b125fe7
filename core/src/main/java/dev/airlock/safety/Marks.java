package dev.airlock.safety;

/**
 * Private characters the guard puts into expanded words: an expansion whose value cannot be known,
 * and glob and brace characters that were unquoted (so active). Real input never carries them:
 * {@link CommandText} turns any it finds into {@link #UNKNOWN}, the cautious reading.
 */
final class Marks {
    static final char UNKNOWN = '\uFFFF';
    static final char STAR = '\uE000';
    static final char QUESTION = '\uE001';
    static final char BRACKET = '\uE002';
    static final char LBRACE = '\uE003';
    static final char COMMA = '\uE004';
    static final char RBRACE = '\uE005';

    private Marks() {
    }

    static boolean isMark(char c) {
        return c == UNKNOWN || (c >= '\uE000' && c <= '\uE006');
    }

    static boolean hasUnknown(String w) {
        return w.indexOf(UNKNOWN) >= 0;
    }

    static boolean hasGlob(String w) {
        return w.indexOf(STAR) >= 0 || w.indexOf(QUESTION) >= 0 || w.indexOf(BRACKET) >= 0;
    }

    /** The word as plain text: glob and brace marks become their characters, unknown parts vanish. */
    static String plain(String w) {
        StringBuilder b = new StringBuilder(w.length());
        for (int i = 0; i < w.length(); i++) {
            char c = w.charAt(i);
            if (c != UNKNOWN) {
                b.append(toChar(c));
            }
        }
        return b.toString();
    }

    /**
     * The word as shell source for a nested parse ({@code bash -c WORD}): marks become their
     * characters, so the inner parse decides quoting again; unknown parts stay unknown.
     */
    static String source(String w) {
        StringBuilder b = new StringBuilder(w.length());
        for (int i = 0; i < w.length(); i++) {
            b.append(toChar(w.charAt(i)));
        }
        return b.toString();
    }

    private static char toChar(char c) {
        return switch (c) {
            case STAR -> '*';
            case QUESTION -> '?';
            case BRACKET -> '[';
            case LBRACE -> '{';
            case COMMA -> ',';
            case RBRACE -> '}';
            default -> c;
        };
    }
}
