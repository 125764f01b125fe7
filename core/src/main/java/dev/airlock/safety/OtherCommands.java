package dev.airlock.safety;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Commands that run other text or keep paths in places {@link WriteCommands} does not look:
 * the shell text of {@code script -c}, {@code split --filter}, {@code gdb -ex 'shell ...'},
 * {@code parallel}, {@code at}; the ex commands of {@code vim -c}; an {@code awk} program that
 * writes or runs; the remote command of {@code ssh}; the words of {@code git} but its messages.
 * Literal text is read as commands; paths in text another program interprets are judged as
 * possible writes.
 */
final class OtherCommands {
    /** Commands judged here completely: the generic reading of their mentions does not apply. */
    static final Set<String> HANDLED = Set.of("awk", "gawk", "mawk", "nawk", "git", "ssh", "tmux", "screen", "at",
            "batch", "parallel");

    private final CommandReader reader;

    OtherCommands(CommandReader reader) {
        this.reader = reader;
    }

    void judge(String name, List<String> args, int depth) {
        switch (name) {
            case "script" -> CommandOptions.optionValues(args, "c", Set.of("--command"), "cEIOBTm",
                    Set.of("--echo", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format", "--output-limit"))
                    .forEach(t -> reader.runText(t, "script -c", depth));
            case "split" -> CommandOptions.optionValues(args, "", Set.of("--filter"), "abClnt",
                    Set.of("--bytes", "--line-bytes", "--lines", "--number", "--suffix-length", "--additional-suffix",
                            "--separator")).forEach(t -> reader.runText(t, "split --filter", depth));
            case "gdb", "gdb-multiarch" -> gdb(args, depth);
            case "vi", "vim", "nvim", "ex", "view", "vimdiff", "gvim" -> vim(name, args, depth);
            case "awk", "gawk", "mawk", "nawk" -> awk(name, args);
            case "git" -> git(args);
            case "ssh" -> ssh(args);
            case "tmux", "screen" -> reader.mentions(args, name + " (commands it runs)", true);
            case "at", "batch" -> reader.mentions(args, name, false); // the commands it reads: see CommandReader.runInput
            case "parallel" -> parallel(args, depth);
            case "link" -> args.forEach(a -> reader.addWrite(a, Access.WRITE, "link (a hard link to it)"));
            case "gzip", "gunzip", "xz", "unxz", "bzip2", "bunzip2", "zstd", "unzstd", "lzma", "unlzma", "uncompress",
                 "lzip", "lz4", "brotli" -> {
                // unpacking writes the name without its suffix beside the packed file
                for (String a : args) {
                    String p = Marks.plain(a);
                    java.util.regex.Matcher m = PACKED.matcher(p);
                    if (!p.startsWith("-") && m.find()) {
                        reader.mentions(List.of(a.substring(0, a.length() - m.group().length())), name + " (the unpacked file)", false);
                    }
                }
            }
            default -> {
                // nothing beyond what WriteCommands found
            }
        }
    }

    private static final java.util.regex.Pattern PACKED = java.util.regex.Pattern.compile("\\.(gz|xz|bz2|zst|Z|lzma|lz|lz4|br|z)$");

    /** gdb's {@code shell CMD} and {@code !CMD} run shell text; other commands are judged by the paths they name. */
    private void gdb(List<String> args, int depth) {
        List<String> cmds = CommandOptions.optionValues(args, "", Set.of("-ex", "--ex", "-iex", "--iex", "-eval-command",
                "--eval-command", "-init-eval-command", "--init-eval-command"), "", Set.of());
        for (int i = 0; i + 1 < args.size(); i++) {
            if (Set.of("-ex", "-iex", "-eval-command", "-init-eval-command").contains(Marks.plain(args.get(i)))) {
                cmds.add(args.get(i + 1)); // gdb's single-dash long options
            }
        }
        for (String c : cmds) {
            String t = c.strip();
            String p = Marks.plain(t);
            if (p.startsWith("!") || p.startsWith("shell ")) {
                reader.runText(t.substring(p.startsWith("!") ? 1 : 6), "gdb shell", depth);
            } else {
                reader.mentions(List.of(t), "gdb command", true);
            }
        }
    }

    /** vim's {@code -c}, {@code --cmd} and {@code +} commands: {@code :!cmd} runs shell text, {@code :w FILE} writes. */
    private void vim(String name, List<String> args, int depth) {
        List<String> cmds = new ArrayList<>(CommandOptions.optionValues(args, "c", Set.of("--cmd"), "cSTuUiwWtqr",
                Set.of("--servername", "--remote")));
        for (String a : args) {
            if (Marks.plain(a).startsWith("+") && Marks.plain(a).length() > 1) {
                cmds.add(a.substring(a.indexOf('+') + 1));
            }
        }
        for (String c : cmds) {
            String t = c.strip().replaceFirst("^[:\\s]*[%.,$0-9'<>]*\\s*", "");
            String p = Marks.plain(t);
            java.util.regex.Matcher w = EX_WRITE.matcher(p);
            if (p.startsWith("!") || p.matches("r(ead)?\\s*!.*")) {
                reader.runText(t.substring(t.indexOf('!') + 1), name + " :!", depth);
            } else if (w.matches()) {
                String file = w.group(1).strip();
                String home = reader.home();
                reader.addWrite(home != null && (file.equals("~") || file.startsWith("~/")) ? home + file.substring(1) : file,
                        Access.WRITE, name + " :w");
            } else {
                reader.mentions(List.of(t), name + " command", true);
            }
        }
    }

    private static final java.util.regex.Pattern EX_WRITE = java.util.regex.Pattern.compile(
            "(?:w|write|wq|x|xit|exi|exit|sav|saveas|up|update|wn|wnext|wN|wprevious)!?\\s+(?:>>\\s*)?(\\S.*)");

    /** An awk program that writes or runs ({@code >}, {@code |}, {@code system}, {@code getline}) is judged like code. */
    private void awk(String name, List<String> args) {
        String valued = "fvFilEe";
        Set<String> longValued = Set.of("--file", "--assign", "--field-separator", "--include", "--load", "--exec", "--source");
        CommandOptions.optionValues(args, "v", Set.of("--assign"), valued, longValued)
                .forEach(v -> reader.mentions(List.of(v.substring(v.indexOf('=') + 1)), name + " -v", false));
        List<String> programs = CommandOptions.optionValues(args, "e", Set.of("--source"), valued, longValued);
        boolean programFile = !CommandOptions.optionValues(args, "fE", Set.of("--file", "--exec"), valued, longValued).isEmpty();
        List<String> ops = CommandOptions.operands(args, valued, longValued);
        List<String> files = ops;
        if (programs.isEmpty() && !programFile && !ops.isEmpty()) {
            programs = List.of(ops.get(0));
            files = ops.subList(1, ops.size());
        }
        for (String prog : programs) {
            String p = Marks.plain(prog);
            if (p.contains(">") || p.contains("|") || p.contains("system") || p.contains("getline")) {
                reader.mentions(List.of(prog), name + " program", false);
                if (CommandKinds.codeMayReach(p)) {
                    reader.addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, ProtectedPaths.ANYWHERE + name
                            + " program that may build a protected path");
                }
            }
        }
        boolean inplace = CommandOptions.optionValues(args, "i", Set.of("--include"), valued, longValued).stream()
                .map(Marks::plain).anyMatch(v -> v.equals("inplace") || v.equals("inplace.awk"));
        if (inplace) {
            files.forEach(f -> reader.addWrite(f, Access.WRITE, name + " -i inplace"));
        }
    }

    /** git's words are judged by the paths they mention, but not its messages ({@code -m}, {@code --message}). */
    private void git(List<String> args) {
        List<String> words = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = Marks.plain(args.get(i));
            if (a.equals("-m") || a.equals("--message") || a.matches("-[a-zA-Z]*m")) {
                i++;
            } else if (!a.startsWith("--message=") && !a.matches("-m.+")) {
                words.add(args.get(i));
            }
        }
        reader.mentions(words, "git", false);
    }

    /** ssh runs its remote command in a shell (which may be this machine's); {@code -E} appends its log to a file. */
    private void ssh(List<String> args) {
        String valued = "BbcDEeFIiJLlmOoPpQRSWw";
        CommandOptions.optionValues(args, "E", Set.of(), valued, Set.of()).forEach(f -> reader.addWrite(f, Access.WRITE, "ssh -E"));
        CommandOptions.optionValues(args, "o", Set.of(), valued, Set.of()).forEach(o -> reader.mentions(List.of(o), "ssh -o", true));
        List<String> ops = CommandOptions.operands(args, valued, Set.of());
        if (ops.size() > 1) {
            reader.mentions(ops.subList(1, ops.size()), "ssh (its remote command)", true);
        }
    }

    /** parallel's command template runs once per argument; without one it runs the lines it reads. */
    private void parallel(List<String> args, int depth) {
        int i = CommandOptions.skipOptions(args, "jSadEINnLP", Set.of("--jobs", "--sshlogin", "--arg-file", "--joblog",
                "--results", "--tmpdir", "--delimiter", "--colsep", "--max-procs", "--timeout", "--retries"));
        List<String> template = new ArrayList<>();
        for (; i < args.size() && !Marks.plain(args.get(i)).startsWith(":::"); i++) {
            template.add(Marks.source(args.get(i)).replace("{}", "\"$1\""));
        }
        if (template.isEmpty()) {
            reader.addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, "parallel (the commands it reads)");
        } else {
            reader.runText(String.join(" ", template), "parallel", depth);
        }
        reader.mentions(args.subList(Math.min(i, args.size()), args.size()), "parallel", false);
    }
}
