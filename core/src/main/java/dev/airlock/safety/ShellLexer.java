package dev.airlock.safety;

import java.util.ArrayList;
import java.util.List;

/**
 * A POSIX/bash lexer for judging a command, not for running it: words with their quoting kept as
 * parts, operators, redirections and here-documents. Command substitutions, process
 * substitutions and arithmetic are unknown values in the word and their text is collected in
 * {@link #nested} to be judged as commands of their own.
 */
final class ShellLexer {
    /** Multi-character redirection operators, longest first so {@code >>} is not read as {@code >}. */
    private static final java.util.List<String> REDIRECT_OPERATORS =
            java.util.List.of("&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&");

    sealed interface Token permits Word, Op, Redir {
    }

    sealed interface Part permits Lit, Var, Unknown {
    }

    /** Literal text; unquoted text keeps glob, brace and tilde meaning. */
    record Lit(String text, boolean quoted) implements Part {
    }

    /** {@code $NAME} or {@code ${NAME...}}; {@code plain} when its value is the variable's value (or a default). */
    record Var(String name, boolean quoted, boolean plain) implements Part {
    }

    /**
     * A value that cannot be known here: {@code $(...)}, {@code $1}, {@code ${#x}}...
     * {@code computed}: the value is made at run time by a command or an indirection ({@code $(...)},
     * backticks, {@code <(...)}, {@code ${!v}}), rather than being a parameter that is merely unset here;
     * {@code command}: the text of the substitution that makes it, when there is one.
     */
    record Unknown(boolean computed, String command) implements Part {
        Unknown(boolean computed) {
            this(computed, null);
        }
    }

    record Word(List<Part> parts) implements Token {
        boolean anyQuoted() {
            return parts.stream().anyMatch(p -> p instanceof Lit l && l.quoted());
        }

        /** The text with quotes removed and expansions as written; for here-doc delimiters and fd numbers. */
        String raw() {
            StringBuilder b = new StringBuilder();
            for (Part p : parts) {
                if (p instanceof Lit l) {
                    b.append(l.text());
                } else {
                    b.append(Marks.UNKNOWN);
                }
            }
            return b.toString();
        }
    }

    /** {@code ; && || | & ( )} and newline ({@code "\n"}). */
    record Op(String op) implements Token {
    }

    /** A redirection: {@code fd} as written (may be empty), the operator, its target word, and a here-doc body. */
    record Redir(String fd, String op, Word target, Heredoc heredoc) implements Token {
    }

    static final class Heredoc {
        final boolean quoted;
        final boolean stripTabs;
        final String delimiter;
        String body = "";

        Heredoc(String delimiter, boolean quoted, boolean stripTabs) {
            this.delimiter = delimiter;
            this.quoted = quoted;
            this.stripTabs = stripTabs;
        }
    }

    private final String s;
    private final int n;
    private int i;
    final List<Token> tokens = new ArrayList<>();
    final List<String> nested = new ArrayList<>();
    private final List<Heredoc> pending = new ArrayList<>();

    private ShellLexer(String s) {
        this.s = s;
        this.n = s.length();
    }

    static ShellLexer lex(String text) {
        ShellLexer l = new ShellLexer(text);
        l.run();
        return l;
    }

    /** The substitutions inside text that the shell expands like a double-quoted string (an unquoted here-doc). */
    static List<String> substitutionsIn(String text) {
        ShellLexer l = new ShellLexer(text);
        List<Part> parts = new ArrayList<>();
        l.readDoubleQuoted(parts, false);
        return l.nested;
    }

    private void run() {
        while (i < n) {
            char c = s.charAt(i);
            if (c == ' ' || c == '\t' || c == '\r') {
                i++;
            } else if (c == '\n') {
                tokens.add(new Op("\n"));
                i++;
                readHeredocBodies();
            } else if (c == '#') {
                while (i < n && s.charAt(i) != '\n') {
                    i++;
                }
            } else if (isOperatorChar(c) && !atProcessSubstitution()) {
                readOperator();
            } else {
                Word w = readWord();
                if (i < n && (s.charAt(i) == '<' || s.charAt(i) == '>') && !atProcessSubstitution() && isFd(w)) {
                    readRedirect(w.raw());
                } else {
                    tokens.add(w);
                }
            }
        }
        for (Heredoc h : pending) {
            h.body = "";
        }
    }

    private static boolean isOperatorChar(char c) {
        return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
    }

    private boolean atProcessSubstitution() {
        char c = s.charAt(i);
        return (c == '<' || c == '>') && i + 1 < n && s.charAt(i + 1) == '(';
    }

    private static boolean isFd(Word w) {
        if (w.parts().size() != 1 || !(w.parts().get(0) instanceof Lit l) || l.quoted() || l.text().isEmpty()) {
            return false;
        }
        String t = l.text();
        if (t.chars().allMatch(Character::isDigit)) {
            return true;
        }
        return t.length() > 2 && t.charAt(0) == '{' && t.charAt(t.length() - 1) == '}'; // bash {var}>file
    }

    private void readOperator() {
        char c = s.charAt(i);
        switch (c) {
            case ';' -> {
                i++;
                while (i < n && (s.charAt(i) == ';' || s.charAt(i) == '&')) {
                    i++;
                }
                tokens.add(new Op(";"));
            }
            case '&' -> {
                if (next(1) == '&') {
                    i += 2;
                    tokens.add(new Op("&&"));
                } else if (next(1) == '>') {
                    readRedirect("");
                } else {
                    i++;
                    tokens.add(new Op("&"));
                }
            }
            case '|' -> {
                if (next(1) == '|') {
                    i += 2;
                    tokens.add(new Op("||"));
                } else {
                    i += next(1) == '&' ? 2 : 1;
                    tokens.add(new Op("|"));
                }
            }
            case '(', ')' -> {
                i++;
                tokens.add(new Op(String.valueOf(c)));
            }
            default -> readRedirect("");
        }
    }

    private char next(int k) {
        return i + k < n ? s.charAt(i + k) : '\0';
    }

    private void readRedirect(String fd) {
        String op = REDIRECT_OPERATORS.stream().filter(o -> s.startsWith(o, i)).findFirst().orElse(s.substring(i, i + 1));
        i += op.length();
        while (i < n && (s.charAt(i) == ' ' || s.charAt(i) == '\t')) {
            i++;
        }
        Word target = null;
        int start = i;
        if (i < n && !(isOperatorChar(s.charAt(i)) && !atProcessSubstitution()) && s.charAt(i) != '\n') {
            target = readWord();
        }
        Heredoc h = null;
        if ((op.equals("<<") || op.equals("<<-")) && target != null) {
            // The delimiter is the word as written, quotes removed and nothing expanded (<<$x ends at "$x").
            String src = s.substring(start, i);
            h = new Heredoc(delimiter(src), target.anyQuoted() || target.parts().size() > 1 || src.indexOf('\\') >= 0,
                    op.equals("<<-"));
            pending.add(h);
        }
        tokens.add(new Redir(fd, op, target, h));
    }

    /** A here-doc delimiter as bash takes it: quote removal on the source text, line continuations dropped. */
    private static String delimiter(String src) {
        StringBuilder b = new StringBuilder();
        char quote = 0;
        for (int k = 0; k < src.length(); k++) {
            char c = src.charAt(k);
            if (quote == 0 && (c == '\'' || c == '"')) {
                quote = c;
            } else if (quote != 0 && c == quote) {
                quote = 0;
            } else if (c == '\\' && quote != '\'' && k + 1 < src.length()) {
                char d = src.charAt(++k);
                if (d != '\n') {
                    b.append(d);
                }
            } else if (c == '$' && quote == 0 && k + 1 < src.length() && (src.charAt(k + 1) == '\'' || src.charAt(k + 1) == '"')) {
                continue; // $'..' and $".." delimit like plain quotes here
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private void readHeredocBodies() {
        for (Heredoc h : pending) {
            StringBuilder body = new StringBuilder();
            while (i < n) {
                int nl = s.indexOf('\n', i);
                int end = nl < 0 ? n : nl;
                String line = s.substring(i, end);
                i = nl < 0 ? n : nl + 1;
                String cmp = h.stripTabs ? line.replaceFirst("^\t+", "") : line;
                if (cmp.equals(h.delimiter)) {
                    break;
                }
                body.append(line).append('\n');
            }
            h.body = body.toString();
        }
        pending.clear();
    }

    private Word readWord() {
        List<Part> parts = new ArrayList<>();
        StringBuilder lit = new StringBuilder();
        while (i < n) {
            char c = s.charAt(i);
            if ("?*+@!".indexOf(c) >= 0 && next(1) == '(') {
                // An extglob group (shopt -s extglob): judged as "anything", so it can only widen a match.
                int depth = 0;
                int k = i + 1;
                for (; k < n; k++) {
                    char e = s.charAt(k);
                    if (e == '(') {
                        depth++;
                    } else if (e == ')' && --depth == 0) {
                        break;
                    }
                }
                if (k < n) {
                    lit.append('*');
                    i = k + 1;
                    continue;
                }
            }
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
                break;
            }
            if (c == '<' || c == '>') {
                if (!atProcessSubstitution()) {
                    break;
                }
                flush(parts, lit);
                i += 2;
                String inner = scanParen();
                nested.add(inner);
                parts.add(new Unknown(true, inner));
                continue;
            }
            switch (c) {
                case '\\' -> {
                    if (i + 1 >= n) {
                        lit.append('\\');
                        i++;
                    } else if (s.charAt(i + 1) == '\n') {
                        i += 2; // line continuation
                    } else {
                        flush(parts, lit);
                        parts.add(new Lit(String.valueOf(s.charAt(i + 1)), true));
                        i += 2;
                    }
                }
                case '\'' -> {
                    flush(parts, lit);
                    int j = s.indexOf('\'', i + 1);
                    int end = j < 0 ? n : j;
                    parts.add(new Lit(s.substring(i + 1, end), true));
                    i = end + 1;
                }
                case '"' -> {
                    flush(parts, lit);
                    i++;
                    readDoubleQuoted(parts, true);
                }
                case '$' -> {
                    flush(parts, lit);
                    readDollar(parts, false);
                }
                case '`' -> {
                    flush(parts, lit);
                    readBacktick(parts);
                }
                default -> {
                    lit.append(c);
                    i++;
                }
            }
        }
        flush(parts, lit);
        return new Word(parts);
    }

    private static void flush(List<Part> parts, StringBuilder lit) {
        if (lit.length() > 0) {
            parts.add(new Lit(lit.toString(), false));
            lit.setLength(0);
        }
    }

    /** Reads a double-quoted string after its opening quote (or to the end when {@code closing} is false). */
    private void readDoubleQuoted(List<Part> parts, boolean closing) {
        StringBuilder b = new StringBuilder();
        while (i < n) {
            char c = s.charAt(i);
            if (closing && c == '"') {
                i++;
                break;
            }
            if (c == '\\' && i + 1 < n) {
                char d = s.charAt(i + 1);
                if (d == '$' || d == '`' || d == '"' || d == '\\') {
                    b.append(d);
                    i += 2;
                    continue;
                }
                if (d == '\n') {
                    i += 2;
                    continue;
                }
                b.append('\\');
                i++;
                continue;
            }
            if (c == '$') {
                quotedFlush(parts, b);
                readDollar(parts, true);
                continue;
            }
            if (c == '`') {
                quotedFlush(parts, b);
                readBacktick(parts);
                continue;
            }
            b.append(c);
            i++;
        }
        if (b.length() > 0 || parts.isEmpty()) {
            parts.add(new Lit(b.toString(), true));
        }
    }

    private static void quotedFlush(List<Part> parts, StringBuilder b) {
        if (b.length() > 0) {
            parts.add(new Lit(b.toString(), true));
            b.setLength(0);
        }
    }

    private void readDollar(List<Part> parts, boolean quoted) {
        char d = next(1);
        if (!quoted && d == '\'') {
            i += 2;
            parts.add(new Lit(CommandText.normalise(ansiC()), true));
        } else if (!quoted && d == '"') {
            i += 2;
            readDoubleQuoted(parts, true);
        } else if (d == '(') {
            i += 2;
            String inner = scanParen();
            nested.add(inner);
            parts.add(new Unknown(true, inner));
        } else if (d == '[') {
            i += 2; // old arithmetic $[...]
            int depth = 1;
            int start = i;
            while (i < n && depth > 0) {
                char c = s.charAt(i++);
                depth += c == '[' ? 1 : c == ']' ? -1 : 0;
            }
            nested.add(s.substring(start, Math.max(start, i - 1)));
            parts.add(new Unknown(false));
        } else if (d == '{') {
            i += 2;
            readBraceParameter(parts, quoted);
        } else if (isNameStart(d)) {
            int start = ++i;
            while (i < n && isNameChar(s.charAt(i))) {
                i++;
            }
            parts.add(new Var(s.substring(start, i), quoted, true));
        } else if (Character.isDigit(d) || "@*#?$!-".indexOf(d) >= 0 && d != '\0') {
            i += 2;
            parts.add(new Unknown(false));
        } else {
            i++;
            parts.add(new Lit("$", quoted));
        }
    }

    private void readBraceParameter(List<Part> parts, boolean quoted) {
        int start = i;
        int depth = 1;
        while (i < n) {
            char c = s.charAt(i);
            if (c == '\\') {
                i += 2;
                continue;
            }
            if (c == '\'' && !quoted) {
                int j = s.indexOf('\'', i + 1);
                i = j < 0 ? n : j + 1;
                continue;
            }
            if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                break;
            }
            i++;
        }
        String content = s.substring(start, Math.min(i, n));
        i = Math.min(i + 1, n);
        int k = 0;
        while (k < content.length() && isNameChar(content.charAt(k))) {
            k++;
        }
        String name = content.substring(0, k);
        String rest = content.substring(k);
        if (rest.indexOf('$') >= 0 || rest.indexOf('`') >= 0) {
            nested.add(rest); // ${x:-$(cmd)}: the default's substitutions run too
        }
        if (name.isEmpty() || !isNameStart(name.charAt(0))) {
            parts.add(new Unknown(content.startsWith("!")));
        } else if (rest.isEmpty() || rest.startsWith(":-") || rest.startsWith(":=")
                || rest.startsWith("-") || rest.startsWith("=")) {
            parts.add(new Var(name, quoted, true));
        } else {
            parts.add(new Var(name, quoted, false));
        }
    }

    /** Reads up to the parenthesis matching one already consumed; returns the text inside. */
    private String scanParen() {
        int start = i;
        int depth = 1;
        while (i < n) {
            char c = s.charAt(i);
            if (c == '\\') {
                i += 2;
                continue;
            }
            if (c == '\'') {
                int j = s.indexOf('\'', i + 1);
                i = j < 0 ? n : j + 1;
                continue;
            }
            if (c == '"') {
                i++;
                while (i < n && s.charAt(i) != '"') {
                    i += s.charAt(i) == '\\' ? 2 : 1;
                }
                i++;
                continue;
            }
            if (c == '(') {
                depth++;
            } else if (c == ')' && --depth == 0) {
                String inner = s.substring(start, i);
                i++;
                return inner;
            }
            i++;
        }
        i = n;
        return s.substring(Math.min(start, n));
    }

    private void readBacktick(List<Part> parts) {
        i++;
        StringBuilder b = new StringBuilder();
        while (i < n && s.charAt(i) != '`') {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < n && "`$\\".indexOf(s.charAt(i + 1)) >= 0) {
                b.append(s.charAt(i + 1));
                i += 2;
            } else {
                b.append(c);
                i++;
            }
        }
        i++;
        nested.add(b.toString());
        parts.add(new Unknown(true, b.toString()));
    }

    /** Decodes bash's {@code $'...'} after the opening quote. */
    private String ansiC() {
        StringBuilder b = new StringBuilder();
        while (i < n && s.charAt(i) != '\'') {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 >= n) {
                b.append(c);
                i++;
                continue;
            }
            char d = s.charAt(i + 1);
            i += 2;
            switch (d) {
                case 'a' -> b.append('\007');
                case 'b' -> b.append('\b');
                case 'e', 'E' -> b.append('\033');
                case 'f' -> b.append('\f');
                case 'n' -> b.append('\n');
                case 'r' -> b.append('\r');
                case 't' -> b.append('\t');
                case 'v' -> b.append('\013');
                case 'c' -> {
                    if (i < n) {
                        b.append((char) (s.charAt(i++) & 0x1f));
                    }
                }
                case 'x' -> b.appendCodePoint(number(16, 2));
                case 'u' -> b.appendCodePoint(number(16, 4));
                case 'U' -> b.appendCodePoint(number(16, 8));
                default -> {
                    if (d >= '0' && d <= '7') {
                        i--;
                        b.append((char) number(8, 3));
                    } else {
                        b.append(d); // \\ \' \" \? and unknown escapes
                    }
                }
            }
        }
        i++;
        // bash cuts the string at a NUL ($'\0x' is empty): what follows never reaches the path
        int nul = b.indexOf("\0");
        return nul < 0 ? b.toString() : b.substring(0, nul);
    }

    private int number(int radix, int max) {
        int v = 0;
        int k = 0;
        while (k < max && i < n && Character.digit(s.charAt(i), radix) >= 0) {
            v = v * radix + Character.digit(s.charAt(i), radix);
            i++;
            k++;
        }
        return Character.isValidCodePoint(v) ? v : 0xfffd;
    }

    static boolean isNameStart(char c) {
        return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    static boolean isNameChar(char c) {
        return isNameStart(c) || (c >= '0' && c <= '9');
    }
}
