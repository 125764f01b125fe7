package dev.airlock.safety;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A path as the guard understands it: components that may hold glob marks, and what follows an
 * expansion whose value is unknown. {@link Open#FULL}: the path continues with whole unknown
 * components (only its known prefix can be judged); {@link Open#PARTIAL}: the last component ends
 * in an unknown value that may continue with more components.
 */
final class PathPattern {
    enum Open { NONE, PARTIAL, FULL }

    final List<String> comps;
    final boolean absolute;
    final Open open;

    private PathPattern(List<String> comps, boolean absolute, Open open) {
        this.comps = List.copyOf(comps);
        this.absolute = absolute;
        this.open = open;
    }

    /**
     * The pattern of an expanded word, relative ones joined to {@code cwd} ({@code null}: the
     * command's starting directory, left relative). Empty when nothing can be judged: the word
     * starts with an unknown value, or the directory is unknown.
     */
    static Optional<PathPattern> of(String word, String cwd) {
        if (word.isEmpty() || word.charAt(0) == Marks.UNKNOWN) {
            return Optional.empty();
        }
        String full = word;
        if (word.charAt(0) != '/') {
            if (cwd != null && Marks.hasUnknown(cwd)) {
                return Optional.empty();
            }
            full = cwd == null ? word : cwd + "/" + word;
        }
        boolean abs = full.startsWith("/");
        String[] raw = full.split("/", -1);
        List<String> comps = new ArrayList<>();
        Open open = Open.NONE;
        for (String c : raw) {
            if (c.isEmpty()) {
                continue;
            }
            int u = c.indexOf(Marks.UNKNOWN);
            if (u >= 0) {
                boolean whole = c.chars().allMatch(ch -> ch == Marks.UNKNOWN);
                if (whole) {
                    open = Open.FULL;
                } else {
                    comps.add(c.replace(Marks.UNKNOWN, Marks.STAR));
                    open = Open.PARTIAL;
                }
                break;
            }
            comps.add(c);
        }
        return Optional.of(new PathPattern(normalise(comps, abs), abs, open));
    }

    /** A concrete absolute path reported by the target. */
    static PathPattern concrete(String path) {
        List<String> comps = new ArrayList<>();
        for (String c : path.split("/")) {
            if (!c.isEmpty()) {
                comps.add(c);
            }
        }
        return new PathPattern(normalise(comps, true), true, Open.NONE);
    }

    /** This pattern's non-literal tail re-attached to another (resolved) prefix. */
    PathPattern withPrefix(String resolvedPrefix, int literalCount) {
        List<String> c = new ArrayList<>(concrete(resolvedPrefix).comps);
        c.addAll(comps.subList(literalCount, comps.size()));
        return new PathPattern(c, true, open);
    }

    private static List<String> normalise(List<String> comps, boolean abs) {
        List<String> out = new ArrayList<>();
        for (String c : comps) {
            if (c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                if (!out.isEmpty() && !out.get(out.size() - 1).equals("..")) {
                    out.remove(out.size() - 1);
                } else if (!abs) {
                    out.add(c);
                }
                continue;
            }
            out.add(c);
        }
        return out;
    }

    boolean isConcrete() {
        return open == Open.NONE && comps.stream().noneMatch(PathPattern::isGlob);
    }

    /** How many leading components are plain text (no glob). */
    int literalCount() {
        int k = 0;
        while (k < comps.size() && !isGlob(comps.get(k))) {
            k++;
        }
        return open == Open.PARTIAL && k == comps.size() ? k - 1 : k;
    }

    String path() {
        StringBuilder b = new StringBuilder();
        for (String c : comps) {
            b.append('/').append(c);
        }
        String s = b.length() == 0 ? "/" : b.toString();
        s = absolute ? s : s.substring(1);
        if (open == Open.FULL) {
            s += "/...";
        } else if (open == Open.PARTIAL) {
            s += "...";
        }
        return Marks.plain(s);
    }

    /** The literal prefix as a path (absolute or relative). */
    String literalPrefix(int count) {
        StringBuilder b = new StringBuilder(absolute ? "/" : "");
        for (int k = 0; k < count; k++) {
            if (k > 0) {
                b.append('/');
            }
            b.append(comps.get(k));
        }
        return b.length() == 0 ? "." : b.toString();
    }

    static boolean isGlob(String comp) {
        return Marks.hasGlob(comp);
    }

    /** Whether this pattern may name exactly {@code r}. Whole unknown components never match (see class doc). */
    boolean mayEqual(List<String> r) {
        return switch (open) {
            case NONE -> comps.size() == r.size() && prefixMatches(r, comps.size());
            case PARTIAL -> comps.size() <= r.size() && prefixMatches(r, comps.size());
            case FULL -> false;
        };
    }

    /** Whether this pattern may name {@code d} or something inside it. */
    boolean mayBeWithin(List<String> d) {
        return switch (open) {
            case NONE -> comps.size() >= d.size() && matchesAll(d);
            case PARTIAL -> comps.size() >= d.size() ? matchesAll(d) : prefixMatches(d, comps.size());
            case FULL -> comps.size() >= d.size() && matchesAll(d);
        };
    }

    /** Whether the tree this pattern names may contain (or be) {@code r}. */
    boolean mayContain(List<String> r) {
        return comps.size() <= r.size() && prefixMatches(r, comps.size());
    }

    /** Pattern components 0..count-1 match r's. */
    private boolean prefixMatches(List<String> r, int count) {
        for (int k = 0; k < count; k++) {
            if (!matches(comps.get(k), r.get(k))) {
                return false;
            }
        }
        return true;
    }

    /** The first |d| pattern components match d. */
    private boolean matchesAll(List<String> d) {
        for (int k = 0; k < d.size(); k++) {
            if (!matches(comps.get(k), d.get(k))) {
                return false;
            }
        }
        return true;
    }

    /** Whether the first |root| components are plain and equal to root's (so the path cannot leave it). */
    boolean surelyWithin(List<String> root) {
        if (comps.size() < root.size() || (comps.size() == root.size() && open == Open.PARTIAL)) {
            return false;
        }
        for (int k = 0; k < root.size(); k++) {
            if (isGlob(comps.get(k)) || !comps.get(k).equals(root.get(k))) {
                return false;
            }
        }
        return true;
    }

    static boolean matches(String pattern, String literal) {
        if (!isGlob(pattern)) {
            return pattern.equals(literal);
        }
        return toRegex(pattern).matcher(literal).matches();
    }

    private static Pattern toRegex(String glob) {
        StringBuilder re = new StringBuilder();
        StringBuilder lit = new StringBuilder();
        for (int k = 0; k < glob.length(); k++) {
            char c = glob.charAt(k);
            if (c == Marks.STAR || c == Marks.QUESTION || c == Marks.BRACKET) {
                if (lit.length() > 0) {
                    re.append(Pattern.quote(lit.toString()));
                    lit.setLength(0);
                }
                if (c == Marks.STAR) {
                    re.append(".*");
                } else if (c == Marks.QUESTION) {
                    re.append('.');
                } else {
                    int end = glob.indexOf(']', k + 2);
                    if (end < 0) {
                        re.append(Pattern.quote("["));
                        continue;
                    }
                    String body = glob.substring(k + 1, end);
                    boolean neg = body.startsWith("!") || body.startsWith("^");
                    // A bracket expression matches one character; judge it as "any character" unless it is plain.
                    if (body.chars().allMatch(ch -> Character.isLetterOrDigit(ch) || ch == '-' || ch == '.' || ch == '_') && !neg) {
                        re.append('[').append(body.replace("\\", "")).append(']');
                    } else {
                        re.append('.');
                    }
                    k = end;
                }
            } else {
                lit.append(c);
            }
        }
        if (lit.length() > 0) {
            re.append(Pattern.quote(lit.toString()));
        }
        // Case-insensitive: with shopt -s nocaseglob, ~/.SS[H] matches ~/.ssh; a wider match only fails closed.
        return Pattern.compile(re.toString(), Pattern.DOTALL | Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE);
    }

    @Override
    public String toString() {
        return path();
    }
}
