package dev.airlock.safety;

import java.util.ArrayList;
import java.util.List;

/** Bash brace expansion over the braces {@link CommandReader} marked as unquoted. */
final class BraceExpansion {
    private static final int MAX_WORDS = 256;

    private BraceExpansion() {
    }

    /** Bash brace expansion over marked braces: {@code a{b,c}d}, {@code {1..3}}; at most {@value #MAX_WORDS} words. */
    static List<String> expand(String w) {
        List<String> out = new ArrayList<>();
        expand(w, out);
        return out;
    }

    private static void expand(String w, List<String> out) {
        if (out.size() >= MAX_WORDS) {
            return;
        }
        for (int a = w.indexOf(Marks.LBRACE); a >= 0; a = w.indexOf(Marks.LBRACE, a + 1)) {
            int depth = 0;
            int b = -1;
            List<Integer> commas = new ArrayList<>();
            for (int k = a; k < w.length(); k++) {
                char c = w.charAt(k);
                if (c == Marks.LBRACE) {
                    depth++;
                } else if (c == Marks.RBRACE && --depth == 0) {
                    b = k;
                    break;
                } else if (c == Marks.COMMA && depth == 1) {
                    commas.add(k);
                }
            }
            if (b < 0) {
                break;
            }
            List<String> alts = new ArrayList<>();
            if (!commas.isEmpty()) {
                int from = a + 1;
                for (int cm : commas) {
                    alts.add(w.substring(from, cm));
                    from = cm + 1;
                }
                alts.add(w.substring(from, b));
            } else {
                alts = sequence(w.substring(a + 1, b));
                if (alts == null) {
                    continue;
                }
            }
            String prefix = w.substring(0, a);
            String suffix = w.substring(b + 1);
            for (String alt : alts) {
                expand(prefix + alt + suffix, out);
            }
            return;
        }
        out.add(unbrace(w));
    }

    private static List<String> sequence(String body) {
        String p = Marks.plain(body);
        String[] f = p.split("\\.\\.", -1);
        if (f.length < 2 || f.length > 3) {
            return null;
        }
        try {
            int from = Integer.parseInt(f[0]);
            int to = Integer.parseInt(f[1]);
            int step = f.length == 3 ? Math.max(1, Math.abs(Integer.parseInt(f[2]))) : 1;
            if (Math.abs((long) to - from) / step > 64) {
                return List.of(String.valueOf(Marks.STAR));
            }
            List<String> out = new ArrayList<>();
            for (int v = from; from <= to ? v <= to : v >= to; v += from <= to ? step : -step) {
                out.add(String.valueOf(v));
            }
            return out;
        } catch (NumberFormatException e) {
            if (f.length == 2 && f[0].length() == 1 && f[1].length() == 1) {
                char x = f[0].charAt(0);
                char y = f[1].charAt(0);
                List<String> out = new ArrayList<>();
                for (char c = x; x <= y ? c <= y : c >= y; c += x <= y ? 1 : -1) {
                    out.add(String.valueOf(c));
                }
                return out;
            }
            return null;
        }
    }

    private static String unbrace(String w) {
        return w.replace(Marks.LBRACE, '{').replace(Marks.COMMA, ',').replace(Marks.RBRACE, '}');
    }
}
