package dev.airlock.safety;

import dev.airlock.safety.ShellLexer.Lit;
import dev.airlock.safety.ShellLexer.Op;
import dev.airlock.safety.ShellLexer.Part;
import dev.airlock.safety.ShellLexer.Redir;
import dev.airlock.safety.ShellLexer.Token;
import dev.airlock.safety.ShellLexer.Unknown;
import dev.airlock.safety.ShellLexer.Var;
import dev.airlock.safety.ShellLexer.Word;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a shell command the way the shell would (words, quotes, expansions we can know, nesting)
 * to find every path it may write and any hardline command. Not a shell: what it cannot know it
 * marks unknown, and the verdict is taken on what is known. Defence in depth, not a boundary.
 */
final class CommandReader {
    /** A path a command may write: the expanded word, the directory it is relative to, how, and through what. */
    record WriteTarget(String word, String cwd, Access access, String via, String ifDirectory, boolean mention) {
        /** {@code ifDirectory}: the write happens only when that path is an existing directory ({@code cp a DEST}). */
        WriteTarget(String word, String cwd, Access access, String via, String ifDirectory) {
            this(word, cwd, access, via, ifDirectory, false);
        }

        WriteTarget(String word, String cwd, Access access, String via) {
            this(word, cwd, access, via, null, false);
        }
    }

    /** What the reader found in a command. */
    record Findings(List<WriteTarget> writes, List<String> hardline) {
    }

    static final String UNKNOWN_CWD = String.valueOf(Marks.UNKNOWN);
    private static final int MAX_DEPTH = 8;
    private static final int MAX_PARSES = 2000;
    /** Past this many words a command is not judged word by word: it needs a human (see readSimple). */
    private static final int MAX_WORDS = 4096;
    /** Top-level directories whose recursive removal or change is a hardline. */
    private static final Set<String> SYSTEM_TOP = Set.of("bin", "boot", "dev", "etc", "home", "lib", "lib32",
            "lib64", "libx32", "proc", "root", "sbin", "sys", "usr", "var");
    private static final Set<String> SHELLS = Set.of("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash",
            "yash", "posh", "fish", "oksh", "loksh");
    private static final Set<String> RESERVED = Set.of("if", "then", "else", "elif", "fi", "do", "done", "while",
            "until", "!", "{", "}", "esac");

    private final Map<String, String> vars;
    private final String user;
    private final String userHome;
    private String cwd;
    /** Directories the command may be in instead of {@link #cwd}: a cd may fail, run in a pipeline, or be skipped by {@code &&}. */
    private final List<String> otherCwds = new ArrayList<>();
    private String oldCwd;
    /** Symbolic links this command makes (link path -> target), so a write through one later is judged at its target. */
    private final Map<String, String> links = new HashMap<>();
    private int parses;
    /** Names this command gave another meaning (alias, hash -p, a function): name -> the command it runs ("" unknown). */
    private final Map<String, String> renames = new HashMap<>();
    /** PATH was pointed at a directory a command could have filled: any name may run something else. */
    private boolean pathShim;
    /** Variables whose values are made at run time ($(...), read, a loop over computed words). */
    private final Set<String> computedVars = new java.util.HashSet<>();
    /** Expanded words holding a value made at run time (see {@link #computedVars}). */
    private final Set<String> computedWords = new java.util.HashSet<>();
    private boolean lastComputed;
    private final Set<WriteTarget> writes = new LinkedHashSet<>();
    private final Set<String> hardline = new LinkedHashSet<>();

    private CommandReader(Map<String, String> vars, String user, String userHome, String cwd) {
        this.vars = new HashMap<>(vars);
        this.user = user;
        this.userHome = userHome;
        this.cwd = cwd;
        if (cwd != null && cwd.startsWith("/")) {
            this.vars.put("PWD", cwd);
        }
    }

    /**
     * Reads {@code command} in every reading {@link CommandText} gives.
     *
     * @param vars     the variables whose values are known ({@code HOME}, {@code USER}, the request's env...)
     * @param user     the target user, for {@code ~user}
     * @param userHome that user's passwd home
     * @param cwd      the command's starting directory, or {@code null} when it is the backend's default
     */
    static Findings read(String command, Map<String, String> vars, String user, String userHome, String cwd) {
        Set<WriteTarget> writes = new LinkedHashSet<>();
        Set<String> hard = new LinkedHashSet<>();
        for (String reading : CommandText.readings(command)) {
            CommandReader r = new CommandReader(vars, user, userHome, cwd);
            r.readText(reading, 0);
            writes.addAll(r.writes);
            hard.addAll(r.hardline);
        }
        return new Findings(List.copyOf(writes), List.copyOf(hard));
    }

    // ---------------------------------------------------------------- structure

    private void readText(String text, int depth) {
        if (depth > MAX_DEPTH) {
            hardline.add("commands nested more than " + MAX_DEPTH + " deep cannot be judged");
            return;
        }
        if (++parses > MAX_PARSES) {
            hardline.add("the command is too complex to judge");
            return;
        }
        ShellLexer lx = ShellLexer.lex(text);
        findForkBombs(lx.tokens);
        noteFunctions(lx.tokens);
        for (String inner : lx.nested) {
            readNested(inner, depth + 1);
        }
        for (Simple c : split(lx.tokens)) {
            readSimple(c, depth);
        }
    }

    /** A nested command runs in its own shell or subshell: its cd and assignments do not leak out. */
    private void readNested(String text, int depth) {
        String savedCwd = cwd;
        String savedOld = oldCwd;
        List<String> savedOthers = new ArrayList<>(otherCwds);
        Map<String, String> savedVars = new HashMap<>(vars);
        for (String reading : CommandText.readings(text)) {
            readText(reading, depth);
            cwd = savedCwd;
            oldCwd = savedOld;
            otherCwds.clear();
            otherCwds.addAll(savedOthers);
            vars.clear();
            vars.putAll(savedVars);
        }
    }

    private static final class Simple {
        final List<Word> words = new ArrayList<>();
        final List<Redir> redirs = new ArrayList<>();
        boolean pipeIn;
        boolean pipeOut;
        boolean background;
        Simple prev;
        String stdinText;
        /** The texts of the command substitutions in its words ({@code eval "$(...)"}, {@code source <(...)}). */
        final List<String> substitutions = new ArrayList<>();
        /** The texts of process substitutions it reads as input ({@code sh < <(...)}). */
        final List<String> inputSubstitutions = new ArrayList<>();

        boolean isEmpty() {
            return words.isEmpty() && redirs.isEmpty();
        }
    }

    private static List<Simple> split(List<Token> tokens) {
        List<Simple> out = new ArrayList<>();
        Simple cur = new Simple();
        for (Token t : tokens) {
            if (t instanceof Word w) {
                cur.words.add(w);
            } else if (t instanceof Redir r) {
                cur.redirs.add(r);
            } else if (t instanceof Op o) {
                if (o.op().equals("|")) {
                    cur.pipeOut = true;
                    out.add(cur);
                    Simple next = new Simple();
                    next.pipeIn = true;
                    next.prev = cur;
                    cur = next;
                } else {
                    cur.background |= o.op().equals("&");
                    out.add(cur);
                    cur = new Simple();
                }
            }
        }
        out.add(cur);
        out.removeIf(Simple::isEmpty);
        return out;
    }

    // ---------------------------------------------------------------- fork bombs

    /** A function whose body runs itself in a pipeline or in the background: {@code :(){ :|:& };:} and its spellings. */
    private void findForkBombs(List<Token> tokens) {
        for (int k = 0; k < tokens.size(); k++) {
            String name = null;
            int body = -1;
            if (tokens.get(k) instanceof Word w && k + 2 < tokens.size() && isOp(tokens.get(k + 1), "(")
                    && isOp(tokens.get(k + 2), ")")) {
                name = Marks.plain(w.raw());
                body = k + 3;
            } else if (tokens.get(k) instanceof Word w && Marks.plain(w.raw()).equals("function")
                    && k + 1 < tokens.size() && tokens.get(k + 1) instanceof Word nm) {
                name = Marks.plain(nm.raw());
                body = k + 2;
                if (body + 1 < tokens.size() && isOp(tokens.get(body), "(") && isOp(tokens.get(body + 1), ")")) {
                    body += 2;
                }
            }
            if (name == null || name.isEmpty()) {
                continue;
            }
            while (body < tokens.size() && isOp(tokens.get(body), "\n")) {
                body++;
            }
            List<Token> inner = bodyTokens(tokens, body);
            for (Simple s : split(inner)) {
                if (s.words.isEmpty()) {
                    continue;
                }
                String first = stripBraces(Marks.plain(s.words.get(0).raw()));
                int w = 0;
                while (first.isEmpty() && ++w < s.words.size()) {
                    first = stripBraces(Marks.plain(s.words.get(w).raw()));
                }
                if (first.equals(name) && (s.pipeIn || s.pipeOut || s.background)) {
                    hardline.add("a fork bomb (" + name + " runs itself in a pipeline or in the background)");
                    return;
                }
            }
        }
    }

    private static String stripBraces(String s) {
        int a = 0;
        int b = s.length();
        while (a < b && s.charAt(a) == '{') {
            a++;
        }
        while (b > a && s.charAt(b - 1) == '}') {
            b--;
        }
        return s.substring(a, b);
    }

    private static List<Token> bodyTokens(List<Token> tokens, int start) {
        List<Token> out = new ArrayList<>();
        if (start >= tokens.size()) {
            return out;
        }
        Token first = tokens.get(start);
        if (isOp(first, "(")) {
            int depth = 0;
            for (int k = start; k < tokens.size(); k++) {
                Token t = tokens.get(k);
                if (isOp(t, "(")) {
                    depth++;
                } else if (isOp(t, ")") && --depth == 0) {
                    break;
                }
                if (k > start) {
                    out.add(t);
                }
            }
            return out;
        }
        if (first instanceof Word w && Marks.plain(w.raw()).startsWith("{")) {
            int depth = 0;
            for (int k = start; k < tokens.size(); k++) {
                Token t = tokens.get(k);
                if (t instanceof Word x) {
                    String p = Marks.plain(x.raw());
                    if (p.startsWith("{")) {
                        depth++;
                    }
                    if (p.endsWith("}") && --depth <= 0) {
                        out.add(t);
                        break;
                    }
                }
                out.add(t);
            }
            return out;
        }
        for (int k = start; k < tokens.size() && !isOp(tokens.get(k), ";") && !isOp(tokens.get(k), "\n"); k++) {
            out.add(tokens.get(k));
        }
        return out;
    }

    private static boolean isOp(Token t, String op) {
        return t instanceof Op o && o.op().equals(op);
    }

    // ---------------------------------------------------------------- one simple command

    private void readSimple(Simple c, int depth) {
        String stdinText = null;
        for (Redir r : c.redirs) {
            if (r.target() == null) {
                continue;
            }
            switch (r.op()) {
                case ">", ">>", ">|", "&>", "&>>", "<>" -> {
                    for (String w : expand(r.target(), false)) {
                        addWrite(w, Access.WRITE, "redirection");
                    }
                }
                case ">&" -> {
                    for (String w : expand(r.target(), false)) {
                        String p = Marks.plain(w);
                        if (!p.equals("-") && !p.chars().allMatch(Character::isDigit)) {
                            addWrite(w, Access.WRITE, "redirection");
                        }
                    }
                }
                case "<<<" -> stdinText = String.join(" ", expand(r.target(), false));
                case "<" -> {
                    for (Part p : r.target().parts()) {
                        if (p instanceof Unknown u && u.command() != null) {
                            c.inputSubstitutions.add(u.command());
                        }
                    }
                }
                case "<<", "<<-" -> {
                    if (r.heredoc() != null) {
                        if (!r.heredoc().quoted) {
                            for (String sub : ShellLexer.substitutionsIn(r.heredoc().body)) {
                                readNested(sub, depth + 1);
                            }
                        }
                        stdinText = r.heredoc().body;
                    }
                }
                default -> {
                    // < and <& read
                }
            }
        }
        c.stdinText = stdinText;
        for (Word w : c.words) {
            for (Part p : w.parts()) {
                if (p instanceof Unknown u && u.command() != null) {
                    c.substitutions.add(u.command());
                }
            }
        }
        int k = 0;
        List<String[]> assignments = new ArrayList<>();
        while (k < c.words.size() && assignmentName(c.words.get(k)) != null) {
            Word w = c.words.get(k);
            String name = assignmentName(w);
            String value = String.join(" ", expand(w, false));
            assignments.add(new String[] {name, value.substring(value.indexOf('=') + 1), lastComputed ? "c" : ""});
            k++;
        }
        List<String> argv = new ArrayList<>();
        for (int j = k; j < c.words.size() && argv.size() < MAX_WORDS; j++) {
            argv.addAll(expand(c.words.get(j), true));
        }
        if (argv.size() >= MAX_WORDS) {
            hardline.add("a command of more than " + MAX_WORDS + " words cannot be judged");
            return;
        }
        for (String[] a : assignments) {
            noteAssignment(a[0], a[1]);
        }
        if (argv.isEmpty()) {
            for (String[] a : assignments) {
                assign(a[0], a[1]);
                if (!a[2].isEmpty()) {
                    computedVars.add(a[0]);
                }
            }
            return;
        }
        readArgv(argv, c, stdinText, depth);
    }

    private void assign(String name, String value) {
        computedVars.remove(name);
        if (Marks.hasUnknown(value)) {
            vars.remove(name);
        } else {
            vars.put(name, Marks.plain(value));
        }
    }

    /** The variable a word assigns ({@code NAME=...} or {@code NAME+=...}, unquoted name), or null. */
    private static String assignmentName(Word w) {
        if (w.parts().isEmpty() || !(w.parts().get(0) instanceof Lit l) || l.quoted()) {
            return null;
        }
        String t = l.text();
        int eq = t.indexOf('=');
        if (eq <= 0) {
            return null;
        }
        String name = t.charAt(eq - 1) == '+' ? t.substring(0, eq - 1) : t.substring(0, eq);
        if (name.isEmpty() || !ShellLexer.isNameStart(name.charAt(0))) {
            return null;
        }
        for (int i = 1; i < name.length(); i++) {
            if (!ShellLexer.isNameChar(name.charAt(i))) {
                return null;
            }
        }
        return name;
    }

    static boolean isPlainAssignment(String w) {
        int eq = w.indexOf('=');
        if (eq <= 0 || !ShellLexer.isNameStart(w.charAt(0))) {
            return false;
        }
        for (int i = 1; i < eq; i++) {
            if (!ShellLexer.isNameChar(w.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /** The directory relative paths are joined to ({@code null}: the starting one). */
    String cwd() {
        return cwd;
    }

    /** A write to {@code word} that happens only when {@code dir} is an existing directory. */
    void addWriteIfDirectory(String word, Access access, String via, String dir) {
        writes.add(new WriteTarget(word, cwd, access, via, dir));
        if (!word.startsWith("/")) {
            for (String other : otherCwds) {
                writes.add(new WriteTarget(word, other, access, via, dir));
            }
        }
    }

    void addWrite(String wordIn, Access access, String viaIn) {
        String word = wordIn;
        String via = viaIn;
        String plain = Marks.plain(word);
        procAlias(word, access, via);
        if (!word.isEmpty() && word.charAt(0) == Marks.UNKNOWN && computedWords.contains(word) && access != Access.MKDIR
                && !via.startsWith(ProtectedPaths.ANYWHERE)) {
            via = ProtectedPaths.ANYWHERE + via + " (to a place computed at run time)";
        }
        // a link this command made: the write lands at its target
        for (Map.Entry<String, String> l : links.entrySet()) {
            String link = l.getKey();
            String full = plain.startsWith("/") || cwd == null || Marks.hasUnknown(cwd) ? plain : cwd + "/" + plain;
            if (full.equals(link) || full.startsWith(link + "/") || plain.equals(link) || plain.startsWith(link + "/")) {
                String rest = full.startsWith(link) ? full.substring(link.length()) : plain.substring(link.length());
                String through = l.getValue() + rest;
                if (!through.equals(word)) {
                    writes.add(new WriteTarget(through, cwd, access, via + " (through a link it made)"));
                }
            }
        }
        WriteTarget t = new WriteTarget(word, cwd, access, via);
        writes.add(t);
        if (!word.startsWith("/")) {
            for (String other : otherCwds) {
                writes.add(new WriteTarget(word, other, access, via));
            }
        }
        if (access == Access.TREE) {
            String v = via;
            PathPattern.of(word, cwd).ifPresent(p -> hardlineTree(p, v));
        }
    }

    /** A command text a program runs ({@code awk}'s {@code system("...")}), judged like a nested shell's. */
    void readCommandText(String text) {
        readNested(text, 1);
    }

    private static final java.util.regex.Pattern PROC_LINK = java.util.regex.Pattern.compile("^/proc/([^/]+)/(root|cwd|fd)(/|$)");

    /**
     * {@code /proc/PID/root/X} is {@code /X}; {@code /proc/PID/cwd/X} is X in that process's directory,
     * this command's own for self (and for {@code $$}); {@code /proc/PID/fd/N} of another process
     * may be any file. What cannot be placed asks.
     */
    private void procAlias(String word, Access access, String via) {
        java.util.regex.Matcher m = PROC_LINK.matcher(word);
        if (!m.find()) {
            return;
        }
        String pid = m.group(1);
        boolean self = pid.equals("self") || pid.equals("thread-self");
        boolean mayBeSelf = self || Marks.hasUnknown(pid);
        String rest = word.substring(m.end());
        switch (m.group(2)) {
            case "root" -> addWrite("/" + rest, access, via + " (through /proc/" + Marks.plain(pid) + "/root)");
            case "cwd" -> {
                if (mayBeSelf) {
                    addWrite(rest.isEmpty() ? "." : rest, access, via);
                }
                if (!self) {
                    addWrite(String.valueOf(Marks.UNKNOWN), access, ProtectedPaths.ANYWHERE + via
                            + " (in another process's working directory)");
                }
            }
            default -> {
                if (!self && !rest.contains("/")) {
                    addWrite(String.valueOf(Marks.UNKNOWN), access, ProtectedPaths.ANYWHERE + via
                            + " (through another process's open file)");
                }
            }
        }
    }

    /** The home {@code ~} names, if known. */
    String home() {
        return vars.get("HOME");
    }

    /** A path a command the guard cannot read may write: protected, it asks; otherwise it is free. */
    void addMention(String word, String via) {
        addMention(word, Access.WRITE, via);
    }

    /** A mention of a place touched as {@code access} ({@link Access#INTO}: anything beneath it, as a new root). */
    void addMention(String word, Access access, String via) {
        writes.add(new WriteTarget(word, cwd, access, via, null, true));
        if (!word.startsWith("/")) {
            for (String other : otherCwds) {
                writes.add(new WriteTarget(word, other, access, via, null, true));
            }
        }
    }

    /** Judges every path the words mention as a possible write ({@link PathMentions}). */
    void mentions(List<String> words, String via, boolean text) {
        for (String w : words) {
            for (String m : PathMentions.in(w, text ? vars.get("HOME") : null)) {
                addMention(m, via);
            }
        }
    }

    /** Shell text another program runs: read where it is literal; where part is computed, asked about when protected names show. */
    void runText(String text, String via, int depth) {
        readNested(Marks.source(text), depth + 1);
        if (Marks.hasUnknown(text)) {
            addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, via + " (text computed at run time)");
        }
    }

    /** {@code ln -s TARGET LINK}: later writes through LINK are judged at TARGET too. */
    void noteLink(String link, String target) {
        String l = Marks.plain(link);
        if (!l.startsWith("/") && cwd != null && !Marks.hasUnknown(cwd)) {
            l = cwd + "/" + l;
        }
        String t = target;
        if (!Marks.plain(t).startsWith("/") && !Marks.hasUnknown(t)) {
            String base = l.contains("/") ? l.substring(0, l.lastIndexOf('/')) : cwd;
            t = base == null ? t : base + "/" + t;
        }
        links.put(stripSlash(l), stripSlash(t));
    }

    /** A recursive removal or change of {@code /}, a top-level system directory, or {@code /$EMPTY}. */
    void hardlineTree(PathPattern p, String via) {
        String why = treeHardline(p);
        if (why != null) {
            hardline.add(via + " of " + why);
        }
    }

    static String treeHardline(PathPattern p) {
        if (!p.absolute) {
            return null;
        }
        if (p.comps.isEmpty()) {
            return p.open == PathPattern.Open.FULL ? "'/' followed by a value that may be empty" : "'/'";
        }
        if (p.comps.size() == 1) {
            for (String top : SYSTEM_TOP) {
                if (PathPattern.matches(p.comps.get(0), top)) {
                    return "the system directory '/" + top + "'";
                }
            }
        }
        return null;
    }

    // ---------------------------------------------------------------- commands

    private void readArgv(List<String> argvIn, Simple c, String stdinText, int depth) {
        List<String> argv = argvIn;
        int rounds = 0;
        while (!argv.isEmpty() && rounds++ < 32) {
            String first = argv.get(0);
            if (Marks.hasUnknown(first)) {
                unknownCommand(argv);
                return;
            }
            String name = basename(Marks.plain(first));
            List<String> args = argv.subList(1, argv.size());
            if (RESERVED.contains(name)) {
                argv = args;
                continue;
            }
            java.util.regex.Matcher table = SHELL_TABLE.matcher(Marks.plain(first));
            if (table.matches()) {
                renames.put(table.group(2), basename(firstWord(table.group(3))));
                return;
            }
            if (isPattern(first)) {
                // /usr/bin/te[e]: the shell runs whatever the pattern matches; judge it as each command it can name
                List<String> named = CommandKinds.namesMatching(first.substring(first.lastIndexOf('/') + 1));
                if (named.size() > 16) {
                    named = List.of(); // a pattern that names almost anything: its mentions are all that can be judged
                }
                mentions(args, "a command named by a pattern", false);
                for (String n : named) {
                    List<String> as = new ArrayList<>(argv);
                    as.set(0, n);
                    readArgv(as, c, stdinText, depth + 1);
                }
                return;
            }
            String renamed = renames.get(name);
            if (renamed != null) {
                mentions(args, name + " (a name this command redefined)", false);
                if (!renamed.isEmpty() && !renamed.equals(name)) {
                    List<String> as = new ArrayList<>(argv);
                    as.set(0, renamed);
                    argv = as;
                    continue;
                }
            }
            CommandKinds.Wrapper wrapper = CommandKinds.WRAPPERS.get(name);
            if (wrapper != null) {
                argv = unwrap(name, wrapper, args, depth);
                continue;
            }
            if (name.startsWith("mkfs") || name.equals("mke2fs") || name.equals("mkswap")) {
                hardline.add(name + " (formats a file system)");
                return;
            }
            switch (name) {
                case "for", "select" -> {
                    loop(args);
                    return;
                }
                case "case", "in", "function", "[[", "[", "test", "((", "true", "false", ":" -> {
                    return;
                }
                case "set" -> {
                    // set -- WORDS: the positional parameters a later "$@" runs or names
                    int dd = CommandOptions.indexOfPlain(args, "--");
                    List<String> words = dd >= 0 ? args.subList(dd + 1, args.size())
                            : args.stream().filter(a -> !Marks.plain(a).startsWith("-") && !Marks.plain(a).startsWith("+")).toList();
                    mentions(words, "set (positional parameters)", false);
                    return;
                }
                case "hash" -> {
                    int p = CommandOptions.indexOfPlain(args, "-p");
                    if (p >= 0 && p + 2 < args.size()) {
                        renames.put(Marks.plain(args.get(p + 2)), basename(Marks.plain(args.get(p + 1))));
                    }
                    return;
                }
                case "shutdown", "reboot", "poweroff", "halt" -> {
                    hardline.add(name + " (stops the machine)");
                    return;
                }
                case "init", "telinit" -> {
                    if (!args.isEmpty() && Set.of("0", "6").contains(Marks.plain(args.get(0)))) {
                        hardline.add(name + " " + Marks.plain(args.get(0)) + " (stops the machine)");
                    }
                    return;
                }
                case "systemctl" -> {
                    for (String a : args) {
                        if (Set.of("poweroff", "reboot", "halt", "kexec").contains(Marks.plain(a))) {
                            hardline.add("systemctl " + Marks.plain(a) + " (stops the machine)");
                        }
                    }
                    return;
                }
                case "sudo" -> argv = CommandOptions.skipAssignments(args, CommandOptions.skipOptions(args, "ugpCDrtUTR",
                        Set.of("--user", "--group", "--prompt", "--close-from", "--chdir", "--role", "--type",
                                "--other-user", "--command-timeout", "--chroot", "--host")));
                case "doas" -> argv = args.subList(CommandOptions.skipOptions(args, "uC", Set.of()), args.size());
                case "nohup", "builtin", "unbuffer", "chronic", "catchsegv" -> argv = args;
                case "setsid" -> argv = args.subList(CommandOptions.skipOptions(args, "", Set.of()), args.size());
                case "exec" -> argv = args.subList(CommandOptions.skipOptions(args, "a", Set.of()), args.size());
                case "command" -> {
                    int at = CommandOptions.skipOptions(args, "", Set.of());
                    for (String a : args.subList(0, at)) {
                        if (a.startsWith("-") && (a.contains("v") || a.contains("V"))) {
                            return; // command -v: a lookup, nothing runs
                        }
                    }
                    argv = args.subList(at, args.size());
                }
                case "time" -> {
                    int at = CommandOptions.skipOptions(args, "of", Set.of("--output", "--format"));
                    List<String> opts = args.subList(0, at);
                    for (int i = 0; i < opts.size(); i++) {
                        if ((opts.get(i).equals("-o") || opts.get(i).equals("--output")) && i + 1 < opts.size()) {
                            addWrite(opts.get(i + 1), Access.WRITE, "time -o");
                        } else if (opts.get(i).startsWith("--output=")) {
                            addWrite(opts.get(i).substring(9), Access.WRITE, "time -o");
                        }
                    }
                    argv = args.subList(at, args.size());
                }
                case "nice" -> argv = args.subList(CommandOptions.skipOptions(args, "n", Set.of("--adjustment")), args.size());
                case "ionice" -> argv = args.subList(CommandOptions.skipOptions(args, "cnp", Set.of("--class", "--classdata", "--pid")), args.size());
                case "stdbuf" -> argv = args.subList(CommandOptions.skipOptions(args, "ioe", Set.of("--input", "--output", "--error")), args.size());
                case "timeout" -> {
                    int at = CommandOptions.skipOptions(args, "sk", Set.of("--signal", "--kill-after"));
                    argv = args.subList(Math.min(at + 1, args.size()), args.size()); // the duration
                }
                case "busybox", "toybox" -> argv = args;
                case "env" -> argv = env(args);
                case "xargs" -> argv = xargs(args);
                case "watch" -> {
                    int at = CommandOptions.skipOptions(args, "nq", Set.of("--interval", "--differences"));
                    readNested(joinSource(args.subList(at, args.size())), depth + 1);
                    return;
                }
                case "eval" -> {
                    readNested(joinSource(args), depth + 1);
                    if (args.stream().anyMatch(Marks::hasUnknown)) {
                        runProduced(c.substitutions, "eval", depth);
                    }
                    return;
                }
                case "source", "." -> {
                    source(args, c, depth);
                    return;
                }
                case "su", "runuser", "sg" -> {
                    for (int i = 0; i < args.size(); i++) {
                        String a = Marks.plain(args.get(i));
                        if ((a.equals("-c") || a.equals("--command")) && i + 1 < args.size()) {
                            readNested(Marks.source(args.get(i + 1)), depth + 1);
                        } else if (a.startsWith("--command=")) {
                            readNested(Marks.source(args.get(i)).substring(10), depth + 1);
                        }
                    }
                    if (name.equals("runuser")) {
                        int dd = CommandOptions.indexOfPlain(args, "--");
                        if (dd >= 0) {
                            argv = args.subList(dd + 1, args.size());
                            continue;
                        }
                    }
                    return;
                }
                case "cd", "pushd" -> {
                    changeDir(args);
                    return;
                }
                case "popd" -> {
                    if (otherCwds.size() < 16 && !otherCwds.contains(cwd)) {
                        otherCwds.add(cwd);
                    }
                    cwd = UNKNOWN_CWD;
                    vars.remove("PWD");
                    return;
                }
                case "alias" -> {
                    // with shopt -s expand_aliases a later word runs the alias's text: judge that text
                    for (String a : args) {
                        String src = Marks.source(a);
                        int eq = src.indexOf('=');
                        if (eq > 0) {
                            readNested(src.substring(eq + 1), depth + 1);
                            renames.put(src.substring(0, eq), basename(firstWord(src.substring(eq + 1))));
                        }
                    }
                    return;
                }
                case "trap" -> {
                    List<String> ops = CommandOptions.operands(args, "", Set.of());
                    if (!ops.isEmpty() && !Marks.plain(ops.get(0)).equals("-")) {
                        readNested(Marks.source(ops.get(0)), depth + 1);
                    }
                    return;
                }
                case "coproc" -> {
                    // coproc [NAME] COMMAND: a NAME is followed by a compound command
                    if (args.size() > 1 && Marks.plain(args.get(1)).equals("{")) {
                        argv = args.subList(1, args.size());
                    } else {
                        argv = args;
                    }
                }
                case "export", "declare", "typeset", "local", "readonly" -> {
                    for (String a : args) {
                        if (isPlainAssignment(a)) {
                            int eq = a.indexOf('=');
                            String n = a.charAt(eq - 1) == '+' ? a.substring(0, eq - 1) : a.substring(0, eq);
                            noteAssignment(n, a.substring(eq + 1));
                            assign(n, a.substring(eq + 1));
                        }
                    }
                    return;
                }
                case "unset", "read", "readarray", "mapfile", "getopts" -> {
                    for (String a : args) {
                        vars.remove(Marks.plain(a));
                        if (!name.equals("unset") && !readsPlainList(c)) {
                            computedVars.add(Marks.plain(a)); // its value comes from input at run time
                        }
                    }
                    return;
                }
                case "find" -> {
                    find(args, depth);
                    return;
                }
                default -> {
                    if (SHELLS.contains(name)) {
                        shell(args, c, stdinText, depth);
                    } else {
                        new WriteCommands(this).judge(name, args);
                        new OtherCommands(this).judge(name, args, depth);
                        if (name.equals("at") || name.equals("batch")) {
                            runInput(c, stdinText, name, depth);
                        }
                        String interpreter = CommandKinds.interpreter(name);
                        if (interpreter != null) {
                            interpreter(interpreter, name, args, c, stdinText, depth);
                        }
                        boolean unread = !CommandKinds.READERS.contains(name) && !CommandKinds.PRECISE.contains(name)
                                && !OtherCommands.HANDLED.contains(name) && CommandKinds.interpreter(name) == null;
                        if (unread || (pathShim && !Marks.plain(first).contains("/"))) {
                            mentions(args, name + (unread ? " (a command the guard cannot read)" : " (PATH may name another program)"), false);
                        }
                    }
                    return;
                }
            }
        }
    }

    private void unknownCommand(List<String> argv) {
        // The command's name is unknown ($(echo rm), $CMD): judge it as if it could be any writer.
        List<String> args = argv.subList(1, argv.size());
        boolean recursive = false;
        for (String a : args) {
            String p = Marks.plain(a);
            if (p.equals("--recursive") || (p.startsWith("-") && !p.startsWith("--") && (p.contains("r") || p.contains("R")))) {
                recursive = true;
            }
        }
        for (String a : args) {
            if (!a.startsWith("-")) {
                addWrite(a, recursive ? Access.TREE : Access.WRITE, "an unknown command");
            }
        }
    }

    /**
     * A {@code cd}: the new directory, while the old one stays possible (the cd may fail, run in a
     * pipeline's subshell or be skipped by {@code false &&}); relative ones also under each
     * {@code CDPATH} entry; a glob stays a pattern; {@code cd -} is the previous directory.
     */
    private void changeDir(List<String> args) {
        List<String> ops = CommandOptions.operands(args, "", Set.of());
        String before = cwd;
        if (otherCwds.size() < 16 && !otherCwds.contains(before)) {
            otherCwds.add(before);
        }
        if (ops.isEmpty()) {
            cwd = vars.getOrDefault("HOME", UNKNOWN_CWD);
        } else {
            String d = ops.get(0);
            if (Marks.plain(d).equals("-")) {
                cwd = oldCwd != null ? oldCwd : UNKNOWN_CWD;
            } else if (Marks.hasUnknown(d)) {
                cwd = UNKNOWN_CWD;
            } else if (d.startsWith("/")) {
                cwd = d;
            } else {
                String cdpath = vars.get("CDPATH");
                if (cdpath != null) {
                    for (String e : cdpath.split(":")) {
                        if (!e.isEmpty() && otherCwds.size() < 16) {
                            otherCwds.add(stripSlash(e) + "/" + d);
                        }
                    }
                }
                if (cwd == null) {
                    cwd = d; // relative to the starting directory; resolved on the target
                } else if (!cwd.equals(UNKNOWN_CWD)) {
                    cwd = cwd + "/" + d;
                }
            }
        }
        oldCwd = before;
        if (cwd != null && cwd.startsWith("/") && !Marks.hasUnknown(cwd) && !Marks.hasGlob(cwd)) {
            vars.put("PWD", Marks.plain(cwd));
        } else {
            vars.remove("PWD");
        }
        if (before != null && before.startsWith("/") && !Marks.hasUnknown(before) && !Marks.hasGlob(before)) {
            vars.put("OLDPWD", Marks.plain(before));
        } else {
            vars.remove("OLDPWD");
        }
    }

    private void shell(List<String> args, Simple c, String stdinText, int depth) {
        boolean dashC = false;
        int i = 0;
        while (i < args.size()) {
            String a = Marks.plain(args.get(i));
            if (a.equals("--")) {
                i++;
                break;
            }
            if (a.startsWith("--")) {
                boolean rc = a.equals("--rcfile") || a.equals("--init-file");
                if (rc && i + 1 < args.size() && Marks.hasUnknown(args.get(i + 1))) {
                    runProduced(c.substitutions, "bash " + a, depth); // the start-up file is made at run time
                }
                i += rc ? 2 : 1;
                continue;
            }
            if ((a.startsWith("-") || a.startsWith("+")) && a.length() > 1) {
                String bundle = a.substring(1);
                dashC |= a.startsWith("-") && bundle.indexOf('c') >= 0;
                i += (bundle.indexOf('o') >= 0 || bundle.indexOf('O') >= 0) ? 2 : 1;
                continue;
            }
            break;
        }
        if (dashC) {
            if (i < args.size()) {
                readNested(Marks.source(args.get(i)), depth + 1);
                if (Marks.hasUnknown(args.get(i))) {
                    runProduced(c.substitutions, "sh -c", depth);
                }
            }
            return;
        }
        if (i < args.size()) {
            return; // a script file: its contents are not judged here
        }
        runInput(c, stdinText, "a shell reading its input", depth);
    }

    /**
     * Commands a program reads on its input and runs (a shell, {@code at}): a here-document or
     * here-string, the text an {@code echo}/{@code printf}/{@code cat <<EOF} pipes in, or a
     * process substitution ({@code sh < <(...)}) is read; other input is judged by what makes it.
     */
    private void runInput(Simple c, String stdinText, String via, int depth) {
        if (stdinText != null) {
            readNested(stdinText, depth + 1);
        } else if (!c.inputSubstitutions.isEmpty()) {
            runProduced(c.inputSubstitutions, via, depth);
        } else if (c.pipeIn && c.prev != null && !c.prev.words.isEmpty()) {
            List<String> prev = new ArrayList<>();
            for (Word w : c.prev.words) {
                prev.addAll(expand(w, true));
            }
            String text = printedText(c.prev, prev);
            if (text == null) {
                producedBy(List.of(c.prev), via, depth);
            } else {
                readNested(text, depth + 1); // echo 'cmd' | sh, cat <<EOF | sh
            }
        }
    }

    /** {@code env [-i0v] [-u NAME] [-C DIR] [-S TEXT] [NAME=VALUE]... COMMAND}: options bundle ({@code -iC DIR}). */
    private List<String> env(List<String> args) {
        int i = 0;
        List<String> split = null;
        options:
        while (i < args.size()) {
            String a = Marks.plain(args.get(i));
            if (a.equals("--")) {
                i++;
                break;
            }
            if (a.equals("-")) {
                i++;
                continue;
            }
            if (a.startsWith("--")) {
                String key = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
                boolean valued = Set.of("--split-string", "--chdir", "--unset").contains(key);
                String value = a.contains("=") ? args.get(i).substring(args.get(i).indexOf('=') + 1)
                        : valued && i + 1 < args.size() ? args.get(i + 1) : null;
                i += valued && !a.contains("=") ? 2 : 1;
                if (key.equals("--chdir") && value != null) {
                    changeDir(List.of(value)); // the command runs there
                } else if (key.equals("--split-string") && value != null) {
                    split = words(Marks.source(value));
                    break;
                }
                continue;
            }
            if (!a.startsWith("-")) {
                break;
            }
            for (int k = 1; k < a.length(); k++) {
                char ch = a.charAt(k);
                if ("uCS".indexOf(ch) < 0) {
                    continue; // -i, -0, -v
                }
                String value;
                if (k + 1 < a.length()) {
                    value = args.get(i).substring(args.get(i).indexOf(ch, 1) + 1);
                } else if (i + 1 < args.size()) {
                    value = args.get(++i);
                } else {
                    break;
                }
                if (ch == 'C') {
                    changeDir(List.of(value));
                } else if (ch == 'S') {
                    split = words(Marks.source(value));
                    i++;
                    break options;
                }
                break;
            }
            i++;
        }
        List<String> rest = CommandOptions.skipAssignments(args, i);
        for (String a : args.subList(Math.min(i, args.size()), args.size() - rest.size())) {
            int eq = Marks.plain(a).indexOf('=');
            noteAssignment(Marks.plain(a).substring(0, eq), a.substring(a.indexOf('=') + 1));
        }
        if (split != null) {
            List<String> out = new ArrayList<>(split);
            out.addAll(rest);
            return out;
        }
        return rest;
    }

    // ---------------------------------------------------------------- renamed commands, wrappers, run text

    /** {@code BASH_ALIASES[name]=text} and {@code BASH_CMDS[name]=path} give a name another meaning. */
    private static final java.util.regex.Pattern SHELL_TABLE = java.util.regex.Pattern.compile(
            "(BASH_ALIASES|BASH_CMDS)\\[['\"]?([^'\"\\]]+)['\"]?\\]\\+?=(.*)", java.util.regex.Pattern.DOTALL);

    private static String firstWord(String text) {
        String t = text.strip();
        int sp = 0;
        while (sp < t.length() && !Character.isWhitespace(t.charAt(sp)) && t.charAt(sp) != ';') {
            sp++;
        }
        return t.substring(0, sp).replace("'", "").replace("\"", "").replace("\\", "");
    }

    /** A command word with an active glob ({@code te[e]}, {@code t?e}); a lone {@code [} is the test command. */
    private static boolean isPattern(String word) {
        String p = Marks.plain(word);
        if (p.equals("[") || p.equals("[[")) {
            return false;
        }
        return word.indexOf(Marks.STAR) >= 0 || word.indexOf(Marks.QUESTION) >= 0
                || (word.indexOf(Marks.BRACKET) >= 0 && word.indexOf(']', word.indexOf(Marks.BRACKET)) > 0);
    }

    /** Function definitions: a later call of that name runs a body the guard judged apart from its arguments. */
    private void noteFunctions(List<Token> tokens) {
        for (int k = 0; k < tokens.size(); k++) {
            if (tokens.get(k) instanceof Word w && k + 2 < tokens.size() && isOp(tokens.get(k + 1), "(")
                    && isOp(tokens.get(k + 2), ")")) {
                renames.putIfAbsent(Marks.plain(w.raw()), "");
            } else if (tokens.get(k) instanceof Word w && Marks.plain(w.raw()).equals("function")
                    && k + 1 < tokens.size() && tokens.get(k + 1) instanceof Word nm) {
                renames.putIfAbsent(Marks.plain(nm.raw()), "");
            }
        }
    }

    /** Directories every system puts on PATH; any other entry may hold a shim the command made. */
    private static final Set<String> SYSTEM_PATH = Set.of("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin",
            "/sbin", "/bin", "/usr/games", "/usr/local/games", "/snap/bin");

    /** An assignment the guard watches: PATH pointed at other directories makes every later name uncertain. */
    private void noteAssignment(String name, String value) {
        if (!name.equals("PATH")) {
            return;
        }
        for (String e : value.split(":")) {
            if (!e.isEmpty() && !Marks.hasUnknown(e) && !SYSTEM_PATH.contains(stripSlash(Marks.plain(e)))) {
                pathShim = true;
            }
        }
    }

    /** {@code for NAME in WORDS}: one literal word is the variable's value; computed words make it computed. */
    private void loop(List<String> args) {
        if (args.isEmpty()) {
            return;
        }
        String name = Marks.plain(args.get(0));
        int in = CommandOptions.indexOfPlain(args, "in");
        List<String> words = in < 0 ? List.of() : args.subList(in + 1, args.size());
        vars.remove(name);
        computedVars.remove(name);
        if (words.size() == 1 && !Marks.hasUnknown(words.get(0)) && !Marks.hasGlob(words.get(0))) {
            vars.put(name, Marks.plain(words.get(0)));
        } else if (words.stream().anyMatch(computedWords::contains)) {
            computedVars.add(name);
        }
    }

    /** {@code git ls-files | while read f}: the lines read are the workdir's relative names. */
    private boolean readsPlainList(Simple c) {
        if (!c.pipeIn || c.prev == null || c.prev.pipeIn) {
            return false;
        }
        List<String> prev = new ArrayList<>();
        c.prev.words.forEach(w -> prev.addAll(expand(w, true)));
        return CommandKinds.plainProducer(joinSource(prev));
    }

    /** Runs a wrapper's options (a directory, a file it writes, text it runs) and returns the command it runs. */
    private List<String> unwrap(String name, CommandKinds.Wrapper w, List<String> args, int depth) {
        int fixed = w.fixed();
        int i = 0;
        while (i < args.size()) {
            String a = Marks.plain(args.get(i));
            if (a.equals("--")) {
                i++;
                break;
            }
            if (a.startsWith("-") && a.length() > 1) {
                String key = a.startsWith("--") && a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
                String value = null;
                if (a.startsWith("--")) {
                    if (a.contains("=")) {
                        value = args.get(i).substring(args.get(i).indexOf('=') + 1);
                    } else if (w.valued().contains(key) && i + 1 < args.size()) {
                        value = args.get(++i);
                    }
                } else {
                    for (int k = 1; k < a.length(); k++) {
                        key = "-" + a.charAt(k);
                        if (w.noCommand().contains(key)) {
                            return List.of();
                        }
                        if (w.valued().contains(key) || w.text().contains(key)) {
                            value = k + 1 < a.length() ? a.substring(k + 1) : i + 1 < args.size() ? args.get(++i) : null;
                            break;
                        }
                    }
                }
                if (w.noCommand().contains(key)) {
                    return List.of();
                }
                if (w.text().contains(key) && value == null && i + 1 < args.size()) {
                    value = args.get(++i);
                }
                if (value != null) {
                    if (w.chdir().contains(key)) {
                        changeDir(List.of(value));
                    } else if (w.writes().contains(key)) {
                        addWrite(value, Access.WRITE, name + " " + key);
                    } else if (w.text().contains(key)) {
                        runText(value, name + " " + key, depth);
                    }
                }
                i++;
                continue;
            }
            if (fixed > 0) {
                switch (w.fixedUse()) {
                    case "write" -> addWrite(args.get(i), Access.WRITE, name + " (the file it locks)");
                    case "root" -> addMention(args.get(i), Access.INTO, name + " (the root the command sees)");
                    default -> {
                        // a mask, a priority, an architecture
                    }
                }
                fixed--;
                i++;
                continue;
            }
            break;
        }
        return args.subList(Math.min(i, args.size()), args.size());
    }

    /** {@code source FILE}: a file is like a script; text made at run time ({@code <(...)}, stdin) is judged by its maker. */
    private void source(List<String> args, Simple c, int depth) {
        if (args.isEmpty()) {
            return;
        }
        String f = Marks.plain(args.get(0));
        if (Marks.hasUnknown(args.get(0))) {
            runProduced(c.substitutions, "source", depth);
        } else if (f.equals("/dev/stdin") || f.equals("/proc/self/fd/0") || f.equals("/dev/fd/0")) {
            runInput(c, c.stdinText, "source", depth);
        }
    }

    /** Text made by command substitutions and then run ({@code eval "$(...)"}, {@code source <(...)}). */
    private void runProduced(List<String> substitutions, String via, int depth) {
        if (substitutions.isEmpty()) {
            addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, via + " (text computed at run time)");
        }
        for (String text : substitutions) {
            producedBy(split(ShellLexer.lex(text).tokens), via, depth);
        }
    }

    /**
     * Text a pipeline prints that a shell then runs: an {@code echo}, {@code printf} or here-document
     * is read as commands; a program that sets up the shell ({@code ssh-agent -s}, {@code pyenv init},
     * {@code X completion bash}) passes; anything else (a decoder, a download, a file) cannot be read
     * here, so it asks.
     */
    private void producedBy(List<Simple> pipeline, String via, int depth) {
        if (pipeline.isEmpty()) {
            return;
        }
        List<String> words = new ArrayList<>();
        pipeline.get(0).words.forEach(w -> words.addAll(expand(w, true)));
        if (words.isEmpty()) {
            return;
        }
        String name = basename(Marks.plain(words.get(0)));
        String printed = pipeline.size() == 1 ? printedText(pipeline.get(0), words) : null;
        if (printed != null) {
            readNested(printed, depth + 1);
            return;
        }
        boolean setup = CommandKinds.ENV_PRINTERS.contains(name) || words.stream().map(Marks::plain)
                .anyMatch(w -> w.contains("completion"));
        if (pipeline.size() == 1 && setup) {
            return;
        }
        addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, ProtectedPaths.ANYWHERE + "text made at run time by "
                + name + " and run by " + via + ", which the guard cannot read");
    }

    /** What an {@code echo}, {@code printf} or {@code cat <<EOF} prints, as shell source; null for any other command. */
    private static String printedText(Simple s, List<String> words) {
        if (words.isEmpty()) {
            return null;
        }
        String p0 = basename(Marks.plain(words.get(0)));
        if (p0.equals("cat") && words.size() == 1 && s.stdinText != null) {
            return s.stdinText;
        }
        if (!p0.equals("echo") && !p0.equals("printf")) {
            return null;
        }
        List<String> rest = new ArrayList<>();
        for (String w : words.subList(1, words.size())) {
            if (!(p0.equals("echo") && Marks.plain(w).matches("-[neE]+"))) {
                rest.add(Marks.source(w));
            }
        }
        return String.join(" ", rest).replace("\\n", "\n");
    }

    /**
     * An interpreter: inline code ({@code python -c}, {@code perl -e}...) or code on its input is
     * judged by the paths it spells and by whether it may build one ({@link CommandKinds#codeMayReach});
     * its other words (a script and its arguments) by the paths they mention.
     */
    private void interpreter(String kind, String name, List<String> args, Simple c, String stdinText, int depth) {
        Set<String> codeOptions = CommandKinds.INTERPRETERS.get(kind);
        List<String> code = new ArrayList<>();
        List<String> others = new ArrayList<>();
        boolean operand = false;
        for (int i = 0; i < args.size(); i++) {
            String a = Marks.plain(args.get(i));
            if (operand) {
                others.add(args.get(i));
                continue;
            }
            String key = a.startsWith("--") && a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
            if (codeOptions.contains(key)) {
                if (a.contains("=") && a.startsWith("--")) {
                    code.add(args.get(i).substring(args.get(i).indexOf('=') + 1));
                } else if (i + 1 < args.size()) {
                    code.add(args.get(++i));
                }
                continue;
            }
            if (a.startsWith("-") && !a.startsWith("--") && a.length() > 2) {
                boolean found = false;
                for (int k = 1; k < a.length() && !found; k++) {
                    if (codeOptions.contains("-" + a.charAt(k))) {
                        found = true;
                        String rest = args.get(i).substring(args.get(i).indexOf(a.charAt(k), 1) + 1);
                        code.add(!rest.isEmpty() ? rest : i + 1 < args.size() ? args.get(++i) : "");
                    }
                }
                if (found) {
                    continue;
                }
            }
            if (!a.startsWith("-") || a.equals("-")) {
                operand = true;
            }
            others.add(args.get(i));
        }
        mentions(others, name + " (its script or arguments)", false);
        if (!code.isEmpty()) {
            code.forEach(t -> code(t, name + " inline code"));
            return;
        }
        boolean fromInput = others.isEmpty() || Marks.plain(others.get(0)).equals("-");
        if (!fromInput) {
            return; // a script file: its contents are not judged here
        }
        if (stdinText != null) {
            code(stdinText, name + " code on its input");
        } else if (c.pipeIn && c.prev != null) {
            List<String> prev = new ArrayList<>();
            c.prev.words.forEach(w -> prev.addAll(expand(w, true)));
            String text = printedText(c.prev, prev);
            if (text != null) {
                code(text, name + " code on its input");
            } else if (!prev.isEmpty() && CommandKinds.DECODERS.contains(basename(Marks.plain(prev.get(0))))) {
                addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, ProtectedPaths.ANYWHERE + name
                        + " running code decoded at run time");
            } else {
                addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, name + " running code made at run time");
            }
        }
    }

    /** Inline code: the paths it spells are judged as possible writes; one that may build a protected path asks. */
    private void code(String text, String via) {
        mentions(List.of(text), via, true);
        if (CommandKinds.codeMayReach(Marks.plain(text))) {
            addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, ProtectedPaths.ANYWHERE + via
                    + " that may build a protected path");
        }
    }

    /** The words of a text (as env -S splits them). */
    private List<String> words(String text) {
        List<String> out = new ArrayList<>();
        for (Token t : ShellLexer.lex(text).tokens) {
            if (t instanceof Word w) {
                out.addAll(expand(w, true));
            }
        }
        return out;
    }

    private List<String> xargs(List<String> args) {
        String replace = null;
        int i = 0;
        while (i < args.size()) {
            String a = Marks.plain(args.get(i));
            if (a.equals("--")) {
                i++;
                break;
            }
            if (!a.startsWith("-") || a.equals("-")) {
                break;
            }
            if (a.equals("-I") && i + 1 < args.size()) {
                replace = Marks.plain(args.get(i + 1));
                i += 2;
                continue;
            }
            if (a.startsWith("-I") && a.length() > 2) {
                replace = a.substring(2);
            } else if (a.startsWith("--replace")) {
                replace = a.contains("=") ? a.substring(a.indexOf('=') + 1) : "{}";
            } else if (a.equals("-i") || (a.startsWith("-i") && a.length() > 2)) {
                replace = a.length() > 2 ? a.substring(2) : "{}";
            } else if (Set.of("-n", "-L", "-P", "-s", "-d", "-E", "-a").contains(a)) {
                i++;
            }
            i++;
        }
        List<String> cmd = new ArrayList<>(args.subList(Math.min(i, args.size()), args.size()));
        if (cmd.isEmpty()) {
            return cmd;
        }
        if (replace != null && !replace.isEmpty()) {
            for (int k = 0; k < cmd.size(); k++) {
                cmd.set(k, cmd.get(k).replace(replace, String.valueOf(Marks.UNKNOWN)));
            }
        } else {
            cmd.add(String.valueOf(Marks.UNKNOWN));
        }
        return cmd;
    }

    private void find(List<String> args, int depth) {
        List<String> roots = new ArrayList<>();
        int i = 0;
        while (i < args.size()) {
            String a = Marks.plain(args.get(i));
            if (a.startsWith("-") || a.equals("(") || a.equals("!") || a.equals(")")) {
                if (roots.isEmpty() && (a.equals("-H") || a.equals("-L") || a.equals("-P") || a.startsWith("-O") || a.equals("-D"))) {
                    i += a.equals("-D") ? 2 : 1;
                    continue;
                }
                break;
            }
            roots.add(args.get(i));
            i++;
        }
        if (roots.isEmpty()) {
            roots.add(".");
        }
        for (; i < args.size(); i++) {
            String a = Marks.plain(args.get(i));
            switch (a) {
                case "-delete" -> roots.forEach(r -> addWrite(r, Access.TREE, "find -delete"));
                case "-fprint", "-fprint0", "-fprintf", "-fls" -> {
                    if (i + 1 < args.size()) {
                        addWrite(args.get(++i), Access.WRITE, "find " + a);
                    }
                }
                case "-exec", "-execdir", "-ok", "-okdir" -> {
                    List<String> cmd = new ArrayList<>();
                    int j = i + 1;
                    while (j < args.size() && !Marks.plain(args.get(j)).equals(";") && !Marks.plain(args.get(j)).equals("+")) {
                        cmd.add(args.get(j));
                        j++;
                    }
                    for (String root : roots) {
                        List<String> inner = new ArrayList<>();
                        for (String w : cmd) {
                            inner.add(w.replace("{}", root + "/" + Marks.UNKNOWN));
                        }
                        if (!inner.isEmpty()) {
                            String saved = cwd;
                            List<String> savedOthers = new ArrayList<>(otherCwds);
                            if (a.endsWith("dir")) {
                                changeDir(List.of(root)); // -execdir runs in the found file's directory, the root for its entries
                            }
                            readArgv(inner, new Simple(), null, depth + 1);
                            cwd = saved;
                            otherCwds.clear();
                            otherCwds.addAll(savedOthers);
                        }
                    }
                    i = j;
                }
                default -> {
                    // tests and actions that do not write
                }
            }
        }
    }

    private static String joinSource(List<String> words) {
        List<String> s = new ArrayList<>();
        for (String w : words) {
            s.add(Marks.source(w));
        }
        return String.join(" ", s);
    }

    static String basename(String path) {
        String p = stripSlash(path);
        int slash = p.lastIndexOf('/');
        return slash < 0 ? p : p.substring(slash + 1);
    }

    static String stripSlash(String p) {
        String s = p;
        while (s.length() > 1 && s.endsWith("/")) {
            s = s.substring(0, s.length() - 1);
        }
        return s;
    }

    // ---------------------------------------------------------------- expansion

    /**
     * Expands a word as the shell would, as far as it can be known: quotes removed, variables
     * with known values substituted, {@code ~} expanded, unquoted glob characters marked, braces
     * expanded, and (when {@code split}) unquoted expansions split into fields.
     */
    List<String> expand(Word w, boolean split) {
        List<StringBuilder> out = new ArrayList<>();
        out.add(new StringBuilder());
        boolean quoted = false;
        boolean computed = false;
        boolean assignment = assignmentName(w) != null;
        for (int pi = 0; pi < w.parts().size(); pi++) {
            Part p = w.parts().get(pi);
            StringBuilder cur = out.get(out.size() - 1);
            if (p instanceof Lit l) {
                if (l.quoted()) {
                    cur.append(l.text());
                    quoted = true;
                } else {
                    appendUnquoted(cur, l.text(), pi == 0, assignment);
                }
            } else if (p instanceof Var v) {
                if (v.name().equals("IFS") && v.plain()) {
                    if (v.quoted()) {
                        cur.append(' ');
                    } else if (split) {
                        out.add(new StringBuilder());
                    }
                    continue;
                }
                String val = v.plain() ? vars.get(v.name()) : null;
                if (val == null) {
                    computed |= computedVars.contains(v.name());
                    cur.append(Marks.UNKNOWN);
                } else if (v.quoted()) {
                    cur.append(val);
                    quoted = true;
                } else if (!split) {
                    cur.append(markGlobs(val));
                } else {
                    String ifs = vars.getOrDefault("IFS", " \t\n");
                    StringBuilder cls = new StringBuilder();
                    ifs.chars().forEach(ch -> cls.append("\\x{").append(Integer.toHexString(ch)).append('}'));
                    String[] fields = ifs.isEmpty() ? new String[] {val} : val.split("[" + cls + "]+", -1);
                    cur.append(markGlobs(fields[0]));
                    for (int f = 1; f < fields.length; f++) {
                        out.add(new StringBuilder(markGlobs(fields[f])));
                    }
                }
            } else if (p instanceof Unknown u) {
                computed |= u.computed() && (u.command() == null || !CommandKinds.plainProducer(u.command()));
                cur.append(Marks.UNKNOWN);
            }
        }
        List<String> words = new ArrayList<>();
        for (StringBuilder b : out) {
            String x = b.toString();
            if (x.isEmpty() && !quoted) {
                continue;
            }
            words.addAll(BraceExpansion.expand(x));
        }
        lastComputed = computed;
        if (computed) {
            computedWords.addAll(words);
        }
        return words;
    }

    private void appendUnquoted(StringBuilder cur, String text, boolean atStart, boolean assignment) {
        int eq = assignment ? text.indexOf('=') : -1;
        for (int k = 0; k < text.length(); k++) {
            char c = text.charAt(k);
            boolean tildePos = (atStart && k == 0) || (assignment && k > 0 && (k - 1 == eq || (k > eq && text.charAt(k - 1) == ':')));
            if (c == '~' && tildePos) {
                int j = k + 1;
                while (j < text.length() && text.charAt(j) != '/' && !(assignment && text.charAt(j) == ':')) {
                    j++;
                }
                String name = text.substring(k + 1, j);
                String home;
                if (name.isEmpty()) {
                    home = vars.get("HOME");
                } else if (name.equals("+")) {
                    home = cwd == null || !cwd.startsWith("/") || Marks.hasUnknown(cwd) ? null : cwd;
                } else if (name.equals("-")) {
                    home = vars.get("OLDPWD");
                } else if (name.equals(user)) {
                    home = userHome;
                } else {
                    home = null;
                }
                cur.append(home == null ? String.valueOf(Marks.UNKNOWN) : home);
                k = j - 1;
                continue;
            }
            cur.append(markChar(c));
        }
    }

    private static char markChar(char c) {
        return switch (c) {
            case '*' -> Marks.STAR;
            case '?' -> Marks.QUESTION;
            case '[' -> Marks.BRACKET;
            case '{' -> Marks.LBRACE;
            case ',' -> Marks.COMMA;
            case '}' -> Marks.RBRACE;
            default -> c;
        };
    }

    private static String markGlobs(String v) {
        StringBuilder b = new StringBuilder(v.length());
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            b.append(c == '*' ? Marks.STAR : c == '?' ? Marks.QUESTION : c == '[' ? Marks.BRACKET : c);
        }
        return b.toString();
    }

}
