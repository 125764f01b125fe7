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
            case "tee" -> CommandOptions.operands(args, "", Set.of("--output-error")).forEach(a -> reader.addWrite(a, Access.WRITE, "tee"));
            case "cp", "mv", "install", "ln", "rsync", "scp" -> copyLike(name, args);
            case "sed" -> inPlace("sed", args, "efl", "i", Set.of("--expression", "--file", "--line-length"), true);
            case "perl" -> inPlace("perl", args, "eEIMmCdDx", "il0", Set.of(), false);
            case "ruby" -> inPlace("ruby", args, "eErIC", "i0", Set.of(), false);
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
            case "curl" -> CommandOptions.optionValues(args, "oDc", Set.of("--output", "--dump-header", "--cookie-jar", "--trace", "--trace-ascii",
                    "--stderr", "--etag-save", "--hsts", "--alt-svc"), "oDcdHuXAbFTwxKErmyYzCUQtPe",
                    Set.of("--data", "--header", "--user", "--request", "--url", "--form", "--config"))
                    .forEach(a -> reader.addWrite(a, Access.WRITE, "curl -o"));
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
                if (bind && !ops.isEmpty()) {
                    reader.addWrite(ops.get(0), Access.TREE, "mount --bind (its source)");
                }
            }
            case "unzip" -> CommandOptions.optionValues(args, "d", Set.of(), "dxX", Set.of()).forEach(a -> reader.addWrite(a, Access.INTO, "unzip -d"));
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
        if (name.equals("rsync") || name.equals("scp")) {
            if (Marks.plain(dest).matches("[^/]*:.*")) {
                return; // a remote destination
            }
        }
        boolean recursive = name.equals("rsync") ? CommandOptions.hasFlag(args, 'a', "--archive") || CommandOptions.hasFlag(args, 'r', "--recursive")
                : CommandOptions.hasFlag(args, 'r', "--recursive") || CommandOptions.hasFlag(args, 'R', "--recursive") || CommandOptions.hasFlag(args, 'a', "--archive");
        reader.addWrite(dest, recursive ? Access.INTO : Access.WRITE, via);
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

    private void tar(List<String> args) {
        boolean extract = false;
        boolean create = false;
        List<String> archive = new ArrayList<>();
        List<String> dir = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = Marks.plain(args.get(i));
            boolean oldStyle = i == 0 && !a.startsWith("-");
            if (a.startsWith("--")) {
                extract |= a.equals("--extract") || a.equals("--get");
                create |= a.equals("--create") || a.equals("--append") || a.equals("--update");
                if (a.startsWith("--file=")) {
                    archive.add(args.get(i).substring(7));
                } else if (a.startsWith("--directory=")) {
                    dir.add(args.get(i).substring(12));
                } else if ((a.equals("--file") || a.equals("--directory")) && i + 1 < args.size()) {
                    (a.equals("--file") ? archive : dir).add(args.get(++i));
                }
                continue;
            }
            if (oldStyle || (a.startsWith("-") && a.length() > 1)) {
                String bundle = oldStyle ? a : a.substring(1);
                int consumed = 0;
                for (int k = 0; k < bundle.length(); k++) {
                    char ch = bundle.charAt(k);
                    extract |= ch == 'x';
                    create |= ch == 'c' || ch == 'r' || ch == 'u';
                    if (ch == 'f' || ch == 'C') {
                        String value;
                        if (!oldStyle && k < bundle.length() - 1) {
                            value = args.get(i).substring(k + 2);
                        } else if (i + 1 + consumed < args.size()) {
                            value = args.get(i + 1 + consumed);
                            consumed++;
                        } else {
                            break;
                        }
                        (ch == 'f' ? archive : dir).add(value);
                        if (!oldStyle) {
                            break;
                        }
                    }
                }
                i += consumed;
            }
        }
        if (create) {
            archive.forEach(f -> {
                if (!Marks.plain(f).equals("-")) {
                    reader.addWrite(f, Access.WRITE, "tar");
                }
            });
        }
        if (extract) {
            if (dir.isEmpty()) {
                dir.add(".");
            }
            dir.forEach(d -> reader.addWrite(d, Access.INTO, "tar -x"));
        }
    }
}
