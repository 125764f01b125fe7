package dev.airlock.safety;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The commands that write files and where they write: redirection aside, {@code tee}, the copy
 * family, in-place editors, {@code dd}, {@code truncate}, mode and owner changes, removal, archive
 * extraction, downloads. Each found path goes to the {@link CommandReader} with how it is touched.
 */
final class WriteCommands {
    private final CommandReader reader;

    WriteCommands(CommandReader reader) {
        this.reader = reader;
    }

    /** Records the paths command {@code name} with {@code args} writes. */
    void judge(String name, List<String> args) {
        switch (name) {
            // --output-error takes its mode only after '=': "tee --output-error FILE" writes FILE
            case "tee" -> CommandOptions.operands(args, "", Set.of()).forEach(a -> reader.addWrite(a, Access.WRITE, "tee"));
            case "cp", "mv", "install", "ln", "rsync", "scp" -> copyLike(name, args);
            case "sed" -> {
                inPlace("sed", args, "efl", "i", Set.of("--expression", "--file", "--line-length"), true);
                sedScripts(args).forEach(this::sedWrites);
            }
            case "awk", "gawk", "mawk", "nawk" -> awk(args);
            case "uniq" -> {
                // --group and --all-repeated take their method only after '='
                List<String> ops = CommandOptions.operands(args, "fsw", Set.of("--skip-fields", "--skip-chars", "--check-chars"));
                if (ops.size() >= 2) {
                    reader.addWrite(ops.get(1), Access.WRITE, "uniq (its output file)");
                }
            }
            case "split", "csplit" -> {
                List<String> ops = CommandOptions.operands(args, name.equals("split") ? "abClnt" : "bfn",
                        Set.of("--bytes", "--line-bytes", "--lines", "--number", "--suffix-length", "--additional-suffix",
                                "--separator", "--filter", "--prefix", "--suffix-format", "--digits"));
                CommandOptions.optionValues(args, "f", Set.of("--prefix"), "bfn", Set.of()).forEach(pfx -> {
                    if (name.equals("csplit")) {
                        reader.addWrite(pfx + Marks.STAR, Access.WRITE, "csplit -f");
                    }
                });
                if (name.equals("split")) {
                    String prefix = ops.size() >= 2 ? ops.get(1) : "x";
                    reader.addWrite(prefix + Marks.STAR, Access.WRITE, "split (its output files)");
                } else if (CommandOptions.optionValues(args, "f", Set.of("--prefix"), "bfn", Set.of()).isEmpty()) {
                    reader.addWrite("xx" + Marks.STAR, Access.WRITE, "csplit");
                }
            }
            case "ed", "red" -> CommandOptions.operands(args, "p", Set.of("--prompt")).forEach(a -> reader.addWrite(a, Access.WRITE, name));
            case "vi", "vim", "nvim", "ex", "view", "vimdiff", "gvim" -> {
                CommandOptions.operands(args, "cSTuUiwWtqr", Set.of("--cmd", "--servername", "--remote")).forEach(a -> {
                    if (!Marks.plain(a).startsWith("+")) {
                        reader.addWrite(a, Access.WRITE, name);
                    }
                });
                CommandOptions.optionValues(args, "wW", Set.of(), "cSTuUiwWtqr", Set.of("--cmd")).forEach(a -> reader.addWrite(a, Access.WRITE, name + " -w"));
            }
            case "script" -> {
                List<String> ops = CommandOptions.operands(args, "cEIOBTm", Set.of("--command", "--echo", "--log-in", "--log-out",
                        "--log-io", "--log-timing", "--logging-format", "--output-limit"));
                reader.addWrite(ops.isEmpty() ? "typescript" : ops.get(0), Access.WRITE, "script (its typescript)");
                CommandOptions.optionValues(args, "IOBT", Set.of("--log-in", "--log-out", "--log-io", "--log-timing"), "cEIOBTm",
                        Set.of("--command", "--echo", "--logging-format", "--output-limit")).forEach(a -> reader.addWrite(a, Access.WRITE, "script"));
            }
            case "openssl" -> {
                for (int i = 0; i + 1 < args.size(); i++) {
                    String a = Marks.plain(args.get(i));
                    if (Set.of("-out", "-keyout", "-certout", "-sigout", "-signature", "-rand_out", "-writerand", "-dump").contains(a)) {
                        reader.addWrite(args.get(i + 1), Access.WRITE, "openssl " + a);
                    }
                }
            }
            case "fallocate" -> CommandOptions.operands(args, "lo", Set.of("--length", "--offset")).forEach(a -> reader.addWrite(a, Access.WRITE, "fallocate"));
            case "git" -> git(args);
            case "perl" -> inPlace("perl", args, "eEIMmCdDx", "i", Set.of(), false);
            case "ruby" -> inPlace("ruby", args, "eErIC", "i", Set.of(), false);
            case "dd" -> {
                for (String a : args) {
                    if (Marks.plain(a).startsWith("of=")) {
                        reader.addWrite(a.substring(3), Access.WRITE, "dd of=");
                    }
                }
            }
            case "truncate" -> CommandOptions.operands(args, "sr", Set.of("--size", "--reference")).forEach(a -> reader.addWrite(a, Access.WRITE, "truncate"));
            case "chmod", "chown", "chgrp", "chattr", "setfacl" -> modeChange(name, args);
            case "rm" -> {
                boolean rec = CommandOptions.hasFlag(args, 'r', "--recursive") || CommandOptions.hasFlag(args, 'R', "--recursive");
                CommandOptions.operands(args, "", Set.of()).forEach(a -> reader.addWrite(a, rec ? Access.TREE : Access.WRITE, rec ? "rm -r" : "rm"));
            }
            case "rmdir", "unlink" -> CommandOptions.operands(args, "", Set.of()).forEach(a -> reader.addWrite(a, Access.WRITE, name));
            case "shred" -> CommandOptions.operands(args, "ns", Set.of("--iterations", "--size", "--random-source")).forEach(a -> reader.addWrite(a, Access.WRITE, "shred"));
            case "touch" -> CommandOptions.operands(args, "rtd", Set.of("--reference", "--date")).forEach(a -> reader.addWrite(a, Access.WRITE, "touch"));
            case "mkdir" -> CommandOptions.operands(args, "m", Set.of("--mode", "--context")).forEach(a -> reader.addWrite(a, Access.MKDIR, "mkdir"));
            case "mkfifo", "mknod" -> CommandOptions.operands(args, "m", Set.of("--mode")).stream().limit(1).forEach(a -> reader.addWrite(a, Access.WRITE, name));
            case "sort" -> CommandOptions.optionValues(args, "o", Set.of("--output"), "okSTt", Set.of("--key", "--buffer-size", "--temporary-directory",
                    "--field-separator", "--files0-from", "--parallel", "--compress-program", "--random-source", "--batch-size"))
                    .forEach(a -> reader.addWrite(a, Access.WRITE, "sort -o"));
            case "curl" -> curl(args);
            case "wget" -> {
                CommandOptions.optionValues(args, "Ooa", Set.of("--output-document", "--output-file", "--append-output"), "OoaPtTwUeiBlQDARIX", Set.of())
                        .forEach(a -> reader.addWrite(a, Access.WRITE, "wget -O"));
                CommandOptions.optionValues(args, "P", Set.of("--directory-prefix"), "OoaPtTwUeiBlQDARIX", Set.of())
                        .forEach(a -> reader.addWrite(a, Access.INTO, "wget -P"));
            }
            case "tar" -> tar(args);
            case "mount" -> {
                // A bind mount exposes its source under another path, where resolving links cannot see it.
                boolean bind = false;
                for (int i = 0; i < args.size(); i++) {
                    String a = Marks.plain(args.get(i));
                    bind |= a.equals("--bind") || a.equals("--rbind") || a.equals("-B") || a.equals("-R")
                            || (a.equals("-o") && i + 1 < args.size() && Marks.plain(args.get(i + 1)).contains("bind"));
                }
                List<String> ops = CommandOptions.operands(args, "otLUTN", Set.of("--options", "--types", "--target", "--source"));
                if (bind && ops.size() > 1) {
                    reader.addWrite(ops.get(0), Access.TREE, "mount --bind (its source)");
                }
                // whatever is mounted hides what was at the mount point: a bind or tmpfs over ~/.ssh replaces
                // everything beneath it (a remount only changes options)
                boolean remount = CommandOptions.optionValues(args, "o", Set.of("--options"), "otLUTN",
                        Set.of("--types", "--target", "--source")).stream().anyMatch(o -> Marks.plain(o).contains("remount"));
                List<String> target = CommandOptions.optionValues(args, "", Set.of("--target"), "otLUTN",
                        Set.of("--options", "--types", "--source"));
                if (remount) {
                    return;
                }
                if (!target.isEmpty()) {
                    target.forEach(t -> reader.addWrite(t, Access.INTO, "mount (its mount point)"));
                } else if (!ops.isEmpty()) {
                    reader.addWrite(ops.get(ops.size() - 1), Access.INTO, "mount (its mount point)");
                }
            }
            case "unzip" -> {
                List<String> into = CommandOptions.optionValues(args, "d", Set.of(), "dxX", Set.of());
                boolean listOnly = CommandOptions.hasFlag(args, 'l', "--list") || CommandOptions.hasFlag(args, 't', "--test")
                        || CommandOptions.hasFlag(args, 'p', "--pipe") || CommandOptions.hasFlag(args, 'Z', "--zipinfo")
                        || CommandOptions.hasFlag(args, 'v', "--verbose");
                if (into.isEmpty() && !listOnly) {
                    reader.addWrite(".", Access.INTO, "unzip (into the working directory)");
                }
                into.forEach(a -> reader.addWrite(a, Access.INTO, "unzip -d"));
            }
            case "ssh-keygen" -> {
                for (String a : args) {
                    String p = Marks.plain(a);
                    if (p.startsWith("-") && !p.startsWith("--") && (p.contains("l") || p.contains("y") || p.contains("F") || p.contains("B"))) {
                        return; // read-only modes
                    }
                }
                CommandOptions.optionValues(args, "f", Set.of(), "bCfNtZmnOIsVzEwGMSaJKjrDPTUY", Set.of()).forEach(a -> {
                    reader.addWrite(a, Access.WRITE, "ssh-keygen -f");
                    reader.addWrite(a + ".pub", Access.WRITE, "ssh-keygen -f");
                });
            }
            case "patch" -> CommandOptions.optionValues(args, "o", Set.of("--output"), "opdiDBrVzFgY", Set.of()).forEach(a -> reader.addWrite(a, Access.WRITE, "patch -o"));
            default -> {
                // not a writer we know; redirections were judged already
            }
        }
    }

    private void copyLike(String name, List<String> args) {
        String shortArgs = switch (name) {
            case "install" -> "tSmogC";
            case "rsync" -> "eTfB";
            case "scp" -> "cFiJloPS";
            default -> "tS";
        };
        Set<String> longArgs = Set.of("--target-directory", "--suffix", "--mode", "--owner", "--group", "--rsh",
                "--temp-dir", "--filter", "--exclude", "--include", "--backup-dir", "--log-file", "--chmod",
                "--exclude-from", "--include-from", "--files-from", "--password-file", "--context", "--strip-program");
        List<String> ops = CommandOptions.operands(args, shortArgs, longArgs);
        List<String> targetDir = CommandOptions.optionValues(args, "t", Set.of("--target-directory"), shortArgs, longArgs);
        boolean noTargetDir = CommandOptions.hasFlag(args, 'T', "--no-target-directory") && !name.equals("rsync");
        boolean installDirs = name.equals("install") && CommandOptions.hasFlag(args, 'd', "--directory");
        String via = name;
        if (installDirs) {
            ops.forEach(a -> reader.addWrite(a, Access.MKDIR, "install -d"));
            return;
        }
        // A hard link to a protected file lets a later write change it under another name.
        if ((name.equals("ln") && !CommandOptions.hasFlag(args, 's', "--symbolic")) || (name.equals("cp") && CommandOptions.hasFlag(args, 'l', "--link"))) {
            List<String> linked = targetDir.isEmpty() ? ops.subList(0, Math.max(0, ops.size() - 1)) : ops;
            linked.forEach(s -> reader.addWrite(s, Access.WRITE, name + " (a hard link to it)"));
        }
        if (name.equals("mv")) {
            List<String> sources = targetDir.isEmpty() ? ops.subList(0, Math.max(0, ops.size() - 1)) : ops;
            sources.forEach(s -> reader.addWrite(s, Access.TREE, "mv (its source)"));
        }
        String dest;
        List<String> sources;
        if (!targetDir.isEmpty()) {
            dest = targetDir.get(targetDir.size() - 1);
            sources = ops;
        } else if (ops.size() == 1 && name.equals("ln")) {
            dest = reader.cwd() == null ? "." : reader.cwd();
            sources = ops;
        } else if (ops.size() >= 2) {
            dest = ops.get(ops.size() - 1);
            sources = ops.subList(0, ops.size() - 1);
        } else {
            return;
        }
        if (name.equals("rsync")) {
            // files rsync itself writes beside the copy
            CommandOptions.optionValues(args, "T", Set.of("--backup-dir", "--log-file", "--temp-dir", "--partial-dir",
                    "--write-batch", "--only-write-batch"), shortArgs, longArgs).forEach(f -> reader.addWrite(f, Access.INTO, "rsync"));
        }
        boolean symbolic = name.equals("cp") && CommandOptions.hasFlag(args, 's', "--symbolic-link")
                || name.equals("ln") && CommandOptions.hasFlag(args, 's', "--symbolic");
        if (symbolic) {
            // a later command (another exec) may write through the link: a link to a protected file asks
            sources.forEach(s -> reader.addMention(s, name + " -s (a link to it that a later command may write through)"));
        }
        if (name.equals("rsync") || name.equals("scp")) {
            if (Marks.plain(dest).matches("[^/]*:.*")) {
                return; // a remote destination
            }
        }
        boolean recursive = name.equals("rsync") ? CommandOptions.hasFlag(args, 'a', "--archive") || CommandOptions.hasFlag(args, 'r', "--recursive")
                : CommandOptions.hasFlag(args, 'r', "--recursive") || CommandOptions.hasFlag(args, 'R', "--recursive") || CommandOptions.hasFlag(args, 'a', "--archive");
        reader.addWrite(dest, recursive ? Access.INTO : Access.WRITE, via);
        boolean fullNames = name.equals("cp") && args.stream().anyMatch(a -> Marks.plain(a).equals("--parents"))
                || name.equals("rsync") && CommandOptions.hasFlag(args, 'R', "--relative");
        if (fullNames) {
            // cp --parents and rsync -R keep each source's path under DEST (rsync from a "/./" on)
            for (String s : sources) {
                String rel = s.contains("/./") ? s.substring(s.indexOf("/./") + 3) : s;
                while (rel.startsWith("./") || rel.startsWith("/")) {
                    rel = rel.substring(rel.startsWith("./") ? 2 : 1);
                }
                reader.addWrite(CommandReader.stripSlash(dest) + "/" + rel, recursive ? Access.INTO : Access.WRITE, via + " (the source's path under it)");
            }
        }
        if (!noTargetDir) {
            // DEST/NAME is written when DEST is a directory: surely with -t or a trailing slash, else if it is one on the target.
            boolean surelyDir = !targetDir.isEmpty() || dest.endsWith("/") || sources.size() > 1;
            for (String s : sources) {
                String into = CommandReader.stripSlash(dest) + "/" + CommandReader.basename(s);
                Access a = recursive ? Access.INTO : Access.WRITE;
                if (surelyDir) {
                    reader.addWrite(into, a, via);
                } else {
                    reader.addWriteIfDirectory(into, a, via, dest);
                }
            }
        }
        if (name.equals("ln") && CommandOptions.hasFlag(args, 's', "--symbolic") && sources.size() == 1) {
            // later writes through the new link land at its target (noted after the link's own writes were judged)
            reader.noteLink(dest, sources.get(0));
            reader.noteLink(CommandReader.stripSlash(dest) + "/" + CommandReader.basename(sources.get(0)), sources.get(0));
        }
    }

    private void inPlace(String name, List<String> args, String shortArgs, String optionalArgs, Set<String> longArgs, boolean sed) {
        boolean inPlace = false;
        boolean script = false;
        List<String> ops = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = Marks.plain(args.get(i));
            if (a.equals("--")) {
                ops.addAll(args.subList(i + 1, args.size()));
                break;
            }
            if (a.startsWith("--")) {
                String key = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
                inPlace |= key.equals("--in-place");
                script |= key.equals("--expression") || key.equals("--file");
                if (!a.contains("=") && longArgs.contains(key)) {
                    i++;
                }
                continue;
            }
            if (a.startsWith("-") && a.length() > 1) {
                for (int k = 1; k < a.length(); k++) {
                    char ch = a.charAt(k);
                    if (!sed && (ch == '0' || ch == 'l')) {
                        k = skipNumber(a, k + 1) - 1; // -0777, -0x1FF, -l012: a number, then more options
                        continue;
                    }
                    if (optionalArgs.indexOf(ch) >= 0) {
                        inPlace |= ch == 'i';
                        break; // the rest is its value (a backup suffix)
                    }
                    if (shortArgs.indexOf(ch) >= 0) {
                        script |= ch == 'e' || ch == 'E' || ch == 'f';
                        if (k == a.length() - 1) {
                            i++;
                        }
                        break;
                    }
                }
                continue;
            }
            ops.add(args.get(i));
        }
        if (!inPlace) {
            return;
        }
        List<String> files = script ? ops : ops.subList(Math.min(1, ops.size()), ops.size());
        files.forEach(f -> reader.addWrite(f, Access.WRITE, name + " -i"));
    }

    /** The end of the octal (or {@code x}-prefixed hex) number perl's {@code -0} and {@code -l} may take. */
    private static int skipNumber(String a, int from) {
        int k = from;
        if (k < a.length() && a.charAt(k) == 'x') {
            k++;
            while (k < a.length() && Character.digit(a.charAt(k), 16) >= 0) {
                k++;
            }
            return k;
        }
        while (k < a.length() && a.charAt(k) >= '0' && a.charAt(k) <= '7') {
            k++;
        }
        return k;
    }

    private void modeChange(String name, List<String> args) {
        boolean recursive = CommandOptions.hasFlag(args, 'R', "--recursive");
        boolean reference = false;
        List<String> ops = new ArrayList<>();
        boolean endOfOptions = false;
        for (int i = 0; i < args.size(); i++) {
            String a = Marks.plain(args.get(i));
            if (!endOfOptions && a.equals("--")) {
                endOfOptions = true;
                continue;
            }
            if (!endOfOptions && a.startsWith("--")) {
                reference |= a.startsWith("--reference");
                if (!a.contains("=") && (a.equals("--reference") || a.equals("--from"))) {
                    i++;
                }
                continue;
            }
            // chmod -w FILE: a mode, not an option, when it holds letters no option has
            if (!endOfOptions && a.startsWith("-") && a.length() > 1 && a.substring(1).chars().allMatch(ch -> "RcfvhHLP".indexOf(ch) >= 0)) {
                continue;
            }
            if (!endOfOptions && name.equals("setfacl") && a.startsWith("-")) {
                if (a.matches("-[mMxX]")) {
                    i++;
                }
                continue;
            }
            ops.add(args.get(i));
        }
        boolean firstIsMode = !reference && !name.equals("setfacl");
        List<String> files = firstIsMode ? ops.subList(Math.min(1, ops.size()), ops.size()) : ops;
        for (String f : files) {
            reader.addWrite(f, recursive ? Access.TREE : Access.WRITE, name + (recursive ? " -R" : ""));
        }
    }

    /** tar's long options whose value is a command it runs. */
    private static final Set<String> TAR_COMMANDS = Set.of("--to-command", "--use-compress-program", "--info-script",
            "--new-volume-script");
    /** tar's long options that take the next word as their value. */
    private static final Set<String> TAR_VALUED = Set.of("--file", "--directory", "--to-command", "--use-compress-program",
            "--info-script", "--new-volume-script", "--files-from", "--exclude-from", "--exclude", "--transform", "--owner",
            "--group", "--mode", "--mtime", "--newer", "--label", "--format", "--blocking-factor", "--record-size",
            "--checkpoint-action", "--suffix", "--backup");

    private void tar(List<String> args) {
        boolean extract = false;
        boolean create = false;
        boolean absoluteNames = false;
        boolean removeFiles = false;
        List<String> archive = new ArrayList<>();
        List<String> dir = new ArrayList<>();
        List<String> members = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = Marks.plain(args.get(i));
            boolean oldStyle = i == 0 && !a.startsWith("-");
            if (a.startsWith("--")) {
                extract |= a.equals("--extract") || a.equals("--get");
                absoluteNames |= a.equals("--absolute-names");
                create |= a.equals("--create") || a.equals("--append") || a.equals("--update");
                removeFiles |= a.equals("--remove-files");
                String key = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
                String value = a.contains("=") ? args.get(i).substring(args.get(i).indexOf('=') + 1)
                        : TAR_VALUED.contains(key) && i + 1 < args.size() ? args.get(++i) : null;
                if (value == null) {
                    continue;
                }
                switch (key) {
                    case "--file" -> archive.add(value);
                    case "--directory" -> dir.add(value);
                    case "--checkpoint-action" -> {
                        String v = Marks.plain(value);
                        if (v.startsWith("exec=") || v.startsWith("exec:")) {
                            reader.runText(value.substring(value.indexOf(v.charAt(4)) + 1), "tar --checkpoint-action", 1);
                        }
                    }
                    default -> {
                        if (TAR_COMMANDS.contains(key)) {
                            reader.runText(value, "tar " + key, 1);
                        }
                    }
                }
                continue;
            }
            if (oldStyle || (a.startsWith("-") && a.length() > 1)) {
                String bundle = oldStyle ? a : a.substring(1);
                int consumed = 0;
                for (int k = 0; k < bundle.length(); k++) {
                    char ch = bundle.charAt(k);
                    extract |= ch == 'x';
                    absoluteNames |= ch == 'P';
                    create |= ch == 'c' || ch == 'r' || ch == 'u';
                    if ("fCIFTXbHKLNVg".indexOf(ch) >= 0) {
                        String value;
                        if (!oldStyle && k < bundle.length() - 1) {
                            value = args.get(i).substring(args.get(i).indexOf(ch, 1) + 1);
                        } else if (i + 1 + consumed < args.size()) {
                            value = args.get(i + 1 + consumed);
                            consumed++;
                        } else {
                            break;
                        }
                        if (ch == 'f' || ch == 'C') {
                            (ch == 'f' ? archive : dir).add(value);
                        } else if (ch == 'I' || ch == 'F') {
                            reader.runText(value, "tar -" + ch, 1);
                        }
                        if (!oldStyle) {
                            break;
                        }
                    }
                }
                i += consumed;
                continue;
            }
            members.add(args.get(i));
        }
        if (create && removeFiles) {
            // --remove-files deletes what it archived
            String from = dir.isEmpty() ? null : dir.get(dir.size() - 1);
            members.forEach(m -> reader.addWrite(from == null || Marks.plain(m).startsWith("/") ? m
                    : CommandReader.stripSlash(from) + "/" + m, Access.TREE, "tar --remove-files"));
        }
        if (create) {
            archive.forEach(f -> {
                if (!Marks.plain(f).equals("-")) {
                    reader.addWrite(f, Access.WRITE, "tar");
                }
            });
        }
        if (extract && absoluteNames) {
            // -P keeps absolute names from the archive: it can write anywhere, which only a human can judge
            reader.addWrite(String.valueOf(Marks.UNKNOWN), Access.INTO, ProtectedPaths.ANYWHERE + "tar -xP (absolute names from the archive)");
        }
        if (extract) {
            if (dir.isEmpty()) {
                dir.add(".");
            }
            dir.forEach(d -> reader.addWrite(d, Access.INTO, "tar -x"));
        }
    }

    /** The scripts sed runs: each -e/--expression value, or the first operand when there is none. */
    private static List<String> sedScripts(List<String> args) {
        List<String> scripts = CommandOptions.optionValues(args, "e", Set.of("--expression"), "efl", Set.of("--file", "--line-length"));
        if (!scripts.isEmpty()) {
            return scripts;
        }
        boolean file = !CommandOptions.optionValues(args, "f", Set.of("--file"), "efl", Set.of("--expression", "--line-length")).isEmpty();
        List<String> ops = CommandOptions.operands(args, "efl", Set.of("--expression", "--file", "--line-length"));
        return file || ops.isEmpty() ? List.of() : List.of(ops.get(0));
    }

    /** sed's {@code w FILE} and {@code W FILE} commands and the {@code w FILE} flag of {@code s}: the file name runs to the end of the line. */
    private void sedWrites(String script) {
        String t = Marks.plain(script);
        int k = 0;
        int n = t.length();
        while (k < n) {
            char c = t.charAt(k);
            if (c == ' ' || c == '\t' || c == ';' || c == '\n' || c == '{' || c == '}' || c == '!' || c == ',' || Character.isDigit(c) || c == '$') {
                k++;
                continue;
            }
            if (c == '/' || (c == '\\' && k + 1 < n)) {
                char d = c == '/' ? '/' : t.charAt(++k);
                k = skipDelimited(t, k + 1, d);
                continue;
            }
            if (c == 's' || c == 'y') {
                if (k + 1 >= n) {
                    return;
                }
                int k0 = k;
                char d = t.charAt(k + 1);
                k = skipDelimited(t, k + 2, d);
                k = skipDelimited(t, k, d);
                int end = k;
                while (end < n && t.charAt(end) != ';' && t.charAt(end) != '\n' && t.charAt(end) != '}' && t.charAt(end) != 'w') {
                    end++;
                }
                if (c == 's' && t.substring(k, end).indexOf('e') >= 0) {
                    // the e flag runs the pattern space after the substitution: the replacement, as far as it is literal
                    String replacement = replacementOf(t, k0, d);
                    reader.runText(replacement, "sed s///e", 1);
                    if (replacement.contains("&") || replacement.matches("(?s).*\\\\[0-9].*")) {
                        reader.addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, "sed s///e (a command made from its input)");
                    }
                }
                if (c == 's' && end < n && t.charAt(end) == 'w') {
                    k = fileName(t, end + 1);
                } else {
                    k = end;
                }
                continue;
            }
            if (c == 'w' || c == 'W') {
                k = fileName(t, k + 1);
                continue;
            }
            if (c == 'e') {
                // e COMMAND runs COMMAND; a bare e runs the pattern space, which is input the guard cannot read
                int nl = t.indexOf('\n', k);
                String cmd = t.substring(k + 1, nl < 0 ? n : nl).strip();
                reader.runText(cmd.isEmpty() ? String.valueOf(Marks.UNKNOWN) : cmd, "sed e", 1);
                k = nl < 0 ? n : nl;
                continue;
            }
            // a, i, c, r, R, b, t, T, : and the rest: their argument runs to the end of the line
            int nl = t.indexOf('\n', k);
            k = "aicrRbtT:e".indexOf(c) >= 0 ? (nl < 0 ? n : nl) : k + 1;
        }
    }

    private int fileName(String t, int from) {
        int nl = t.indexOf('\n', from);
        int end = nl < 0 ? t.length() : nl;
        String f = t.substring(from, end).strip();
        if (!f.isEmpty() && !f.equals("/dev/stdout") && !f.equals("/dev/stderr")) {
            reader.addWrite(f, Access.WRITE, "sed w"); // sed takes the name as written: no ~, no globs
        }
        return end;
    }

    /** The replacement of the {@code s} command at {@code k0} with delimiter {@code d}, its escaped delimiters undone. */
    private static String replacementOf(String t, int k0, char d) {
        int from = skipDelimited(t, k0 + 2, d);
        int to = skipDelimited(t, from, d) - 1;
        return to <= from ? "" : t.substring(from, to).replace("\\" + d, String.valueOf(d));
    }

    private static int skipDelimited(String t, int from, char d) {
        int k = from;
        while (k < t.length() && t.charAt(k) != d) {
            k += t.charAt(k) == '\\' ? 2 : 1;
        }
        return Math.min(k + 1, t.length());
    }

    private static final java.util.regex.Pattern AWK_OUTPUT = java.util.regex.Pattern.compile(
            "\\bprintf?\\b[^;{}\\n]*?(>>?|\\|)\\s*(\"(?:[^\"\\\\]|\\\\.)*\"|[A-Za-z_$][A-Za-z_0-9]*)");
    /** {@code system(x)}, {@code system("a" x)}: a command not wholly literal. */
    private static final java.util.regex.Pattern AWK_SYSTEM_COMPUTED = java.util.regex.Pattern.compile(
            "\\bsystem\\s*\\(\\s*(?!\"(?:[^\"\\\\]|\\\\.)*\"\\s*\\))");
    private static final java.util.regex.Pattern SHELL_WORD = java.util.regex.Pattern.compile(
            "\\s*(?:/\\S*/)?(?:sh|bash|dash|zsh|ksh|mksh|ash|busybox sh)(?:\\s|$)");
    private static final java.util.regex.Pattern AWK_SYSTEM = java.util.regex.Pattern.compile("\\bsystem\\s*\\(\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** awk's {@code print > "FILE"}, {@code print >> "FILE"}, {@code print | "CMD"} and {@code system("CMD")}. */
    private void awk(List<String> args) {
        if (!CommandOptions.optionValues(args, "f", Set.of("--file"), "fvF", Set.of("--assign", "--field-separator")).isEmpty()) {
            return; // the program is a file
        }
        List<String> ops = CommandOptions.operands(args, "fvF", Set.of("--assign", "--field-separator", "--file"));
        if (ops.isEmpty()) {
            return;
        }
        String prog = Marks.plain(ops.get(0));
        java.util.regex.Matcher m = AWK_OUTPUT.matcher(prog);
        while (m.find()) {
            String target = m.group(2);
            boolean literal = target.startsWith("\"");
            String value = literal ? target.substring(1, target.length() - 1).replace("\\\"", "\"") : String.valueOf(Marks.UNKNOWN);
            if (m.group(1).equals("|")) {
                if (literal) {
                    reader.readCommandText(value);
                }
                if (!literal || SHELL_WORD.matcher(value).lookingAt()) {
                    // print | "sh" runs the program's output, print | cmd a command made at run time
                    reader.addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, ProtectedPaths.ANYWHERE
                            + "awk running commands made from its input");
                }
            } else {
                reader.addWrite(value, Access.WRITE, "awk print " + m.group(1));
            }
        }
        java.util.regex.Matcher sys = AWK_SYSTEM.matcher(prog);
        while (sys.find()) {
            reader.readCommandText(sys.group(1).replace("\\\"", "\""));
        }
        if (AWK_SYSTEM_COMPUTED.matcher(prog).find()) {
            reader.addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, ProtectedPaths.ANYWHERE
                    + "awk system() of a command made at run time");
        }
    }

    /** git writes its work tree in these subcommands: at --work-tree, or where it runs. */
    private static final Set<String> GIT_WORKTREE_WRITERS = Set.of("checkout", "restore", "reset", "switch", "stash", "apply",
            "am", "merge", "pull", "rebase", "cherry-pick", "revert", "clone", "read-tree", "checkout-index");

    private void git(List<String> args) {
        String workTree = null;
        int i = 0;
        while (i < args.size()) {
            String a = Marks.plain(args.get(i));
            if (a.equals("--work-tree") && i + 1 < args.size()) {
                workTree = args.get(i + 1);
                i += 2;
            } else if (a.startsWith("--work-tree=")) {
                workTree = args.get(i).substring(12);
                i++;
            } else if ((a.equals("-C") || a.equals("-c") || a.equals("--git-dir") || a.equals("--namespace")) && i + 1 < args.size()) {
                if (a.equals("-C") && workTree == null) {
                    workTree = args.get(i + 1);
                }
                i += 2;
            } else if (a.startsWith("-")) {
                i++;
            } else {
                break;
            }
        }
        if (i >= args.size()) {
            return;
        }
        String sub = Marks.plain(args.get(i));
        if (!GIT_WORKTREE_WRITERS.contains(sub)) {
            return;
        }
        if (sub.equals("clone")) {
            List<String> ops = CommandOptions.operands(args.subList(i + 1, args.size()), "obcju",
                    Set.of("--origin", "--branch", "--config", "--jobs", "--upload-pack", "--template", "--reference", "--depth", "--separate-git-dir"));
            if (ops.size() >= 2) {
                reader.addWrite(ops.get(1), Access.INTO, "git clone");
            }
            return;
        }
        reader.addWrite(workTree == null ? "." : workTree, Access.INTO, "git " + sub + " (the work tree)");
    }

    private void curl(List<String> args) {
        Set<String> valued = Set.of("--data", "--header", "--user", "--request", "--url", "--form", "--config", "--output-dir");
        String withArgs = "oDcdHuXAbFTwxKErmyYzCUQtPe";
        // a config file (-K) may name outputs the command line does not show
        CommandOptions.optionValues(args, "K", Set.of("--config"), withArgs, valued).forEach(k ->
                reader.addWrite(String.valueOf(Marks.UNKNOWN), Access.WRITE, "curl -K (outputs its config may name)"));
        CommandOptions.optionValues(args, "oDc", Set.of("--output", "--dump-header", "--cookie-jar", "--trace", "--trace-ascii",
                "--stderr", "--etag-save", "--hsts", "--alt-svc"), withArgs, valued)
                .forEach(a -> reader.addWrite(a, Access.WRITE, "curl -o"));
        List<String> dirs = CommandOptions.optionValues(args, "", Set.of("--output-dir"), withArgs, valued);
        dirs.forEach(d -> reader.addWrite(d, Access.INTO, "curl --output-dir"));
        boolean remoteName = CommandOptions.hasFlag(args, 'O', "--remote-name") || args.stream().anyMatch(a -> Marks.plain(a).equals("--remote-name-all"));
        if (remoteName) {
            for (String u : CommandOptions.operands(args, withArgs, valued)) {
                String url = Marks.plain(u).replaceFirst("[?#].*$", "");
                String file = url.substring(url.lastIndexOf('/') + 1);
                if (file.isEmpty()) {
                    continue;
                }
                if (dirs.isEmpty()) {
                    reader.addWrite(file, Access.WRITE, "curl -O");
                } else {
                    dirs.forEach(d -> reader.addWrite(CommandReader.stripSlash(d) + "/" + file, Access.WRITE, "curl -O"));
                }
            }
        }
    }
}
