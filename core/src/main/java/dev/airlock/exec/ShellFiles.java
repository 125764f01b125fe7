package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.FileStat;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.WriteOptions;
import dev.airlock.shell.Shell;
import dev.airlock.shell.SpecialFiles;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * {@link RemoteFiles} for any backend that can run POSIX {@code sh}: every operation is one
 * internal exec whose data travels through stdin and stdout (so through the backend's stdin mode),
 * never argv. Paths are quoted once, by {@link Shell}.
 */
final class ShellFiles implements RemoteFiles {
    private final CoreEnvironment env;
    private final ShellFileRuns runs;
    private final ShellWrite writes;
    /**
     * The path as given was judged already: these scripts stand behind a backend's native file
     * API ({@link dev.airlock.spi.CoreAccess#shellFiles}), whose {@link GuardedFiles} judged it on
     * the same expanded path. Judging it again cost a second resolution (an exec on a backend that
     * cannot answer it on this host) for every write a native API handed here. A physical place
     * the write finds itself (a link on the way) is judged here either way: only these scripts see it.
     */
    private final boolean pathJudged;

    ShellFiles(CoreEnvironment env, boolean pathJudged) {
        this.env = env;
        this.runs = new ShellFileRuns(env);
        this.writes = new ShellWrite(env, runs);
        this.pathJudged = pathJudged;
    }

    /** The guard's judgement of the path as given, unless {@link #pathJudged}. */
    private void judge(String t, String operation) {
        if (!pathJudged) {
            env.safety().checkWrite(t, operation);
        }
    }

    private String resolve(String path) {
        if (path == null || path.isEmpty() || path.indexOf('\0') >= 0) {
            throw new dev.airlock.ConfigurationException("a path must be non-empty and hold no NUL byte");
        }
        return env.target().expand(path);
    }

    /** The longest path and file name Linux takes (PATH_MAX without its NUL, NAME_MAX). */
    private static final int PATH_MAX = 4095;
    private static final int NAME_MAX = 255;

    /**
     * Judges the path as given, then writes it the shell way ({@link ShellWrite}: one run where the
     * path is its own physical place, else the physical place found, judged too, and written).
     */
    @Override
    public void write(String path, Payload content, WriteOptions options) {
        String t = resolve(path);
        checkLength(t);
        judge(t, "write");
        writes.write(t, content, options);
    }

    private static void checkLength(String t) {
        int bytes = t.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > PATH_MAX) {
            throw new dev.airlock.ConfigurationException("the path is " + bytes + " bytes long; the target takes at most "
                    + PATH_MAX + " (" + t.substring(0, Math.min(60, t.length())) + "...)");
        }
        for (String c : t.split("/")) {
            if (c.getBytes(StandardCharsets.UTF_8).length > NAME_MAX) {
                throw new dev.airlock.ConfigurationException("a name in the path is longer than " + NAME_MAX + " bytes ("
                        + c.substring(0, Math.min(60, c.length())) + "...)");
            }
        }
    }

    /** A script that refused by {@link SpecialFiles}' rule: denied, with its one-line reason. */
    static void refused(ShellFileRuns.Outcome o) {
        if (o.exit() == SpecialFiles.REFUSED) {
            throw new dev.airlock.DeniedException(o.err().lines().findFirst().orElse("refused: not a regular file"));
        }
    }

    @Override
    public InputStream read(String path) {
        String t = resolve(path);
        String script = "p=" + Shell.quotePath(t) + "\n"
                + "[ -e \"$p\" ] || exit 2\n"
                + "[ -d \"$p\" ] && { echo \"is a directory: $p\" >&2; exit 3; }\n"
                + "[ -r \"$p\" ] || { echo \"permission denied: $p\" >&2; exit 4; }\n"
                + "printf A\n"
                + "exec cat -- \"$p\"\n";
        return runs.streamed("read", t, script);
    }

    @Override
    public Optional<FileStat> stat(String path) {
        String t = resolve(path);
        String script = "p=" + Shell.quotePath(t) + "\n"
                + "[ -e \"$p\" ] || [ -L \"$p\" ] || exit 2\n"
                + "exec stat -c '%f %s %Y' -- \"$p\"\n";
        ShellFileRuns.Outcome o = runs.run(script, null);
        if (o.exit() == 2) {
            return Optional.empty();
        }
        if (o.exit() != 0) {
            throw runs.failure("stat", t, o);
        }
        return Optional.of(parseStat(t, name(t), o.out().trim()));
    }

    @Override
    public List<FileStat> list(String dir) {
        String t = resolve(dir);
        String script = "p=" + Shell.quotePath(t) + "\n"
                + "[ -d \"$p\" ] || { [ -e \"$p\" ] && { echo \"not a directory: $p\" >&2; exit 3; }; exit 2; }\n"
                + "cd -- \"$p\" || exit 4\n"
                + "for f in * .[!.]* ..?*; do\n"
                + "  [ -e \"$f\" ] || [ -L \"$f\" ] || continue\n"
                + "  stat -c '%f %s %Y' -- \"$f\" || continue\n"
                + "  printf '%s\\0' \"$f\"\n"
                + "done\n";
        ShellFileRuns.Outcome o = runs.run(script, null);
        if (o.exit() == 2) {
            throw new NoSuchPathException(t);
        }
        if (o.exit() != 0) {
            throw runs.failure("list", t, o);
        }
        List<FileStat> out = new ArrayList<>();
        String s = o.out();
        int i = 0;
        while (i < s.length()) {
            int nl = s.indexOf('\n', i);
            int nul = nl < 0 ? -1 : s.indexOf('\0', nl + 1);
            if (nl < 0 || nul < 0) {
                break;
            }
            String name = s.substring(nl + 1, nul);
            String child = t.endsWith("/") ? t + name : t + "/" + name;
            out.add(parseStat(child, name, s.substring(i, nl)));
            i = nul + 1;
        }
        out.sort(Comparator.comparing(FileStat::name));
        return out;
    }

    @Override
    public boolean delete(String path) {
        String t = resolve(path);
        if (t.equals("/") || t.isBlank()) {
            throw new dev.airlock.DeniedException("refusing to delete '/'");
        }
        judge(t, "delete");
        String script = "p=" + Shell.quotePath(t) + "\n"
                + "[ -e \"$p\" ] || [ -L \"$p\" ] || exit 2\n"
                + SpecialFiles.deleteCheck()
                + "exec rm -rf -- \"$p\"\n";
        ShellFileRuns.Outcome o = runs.run(script, null);
        if (o.exit() == 2) {
            return false;
        }
        refused(o);
        if (o.exit() != 0) {
            throw runs.failure("delete", t, o);
        }
        return true;
    }

    @Override
    public void mkdirs(String dir) {
        String t = resolve(dir);
        judge(t, "mkdirs");
        ShellFileRuns.Outcome o = runs.run("exec mkdir -p -- " + Shell.quotePath(t) + "\n", null);
        if (o.exit() != 0) {
            throw runs.failure("mkdirs", t, o);
        }
    }

    @Override
    public void copyIn(String dir, InputStream tar) {
        String t = resolve(dir);
        judge(t, "copyIn");
        String script = "mkdir -p -- " + Shell.quotePath(t) + " && cd -- " + Shell.quotePath(t) + " || exit 4\n"
                + "if tar --version 2>/dev/null | grep -q GNU; then exec tar -xpf - --no-same-owner; else exec tar -xf -; fi\n";
        ShellFileRuns.Outcome o = runs.run(script, Payload.ofStream(tar));
        if (o.exit() != 0) {
            throw runs.failure("copyIn", t, o);
        }
    }

    @Override
    public InputStream copyOut(String dir) {
        String t = resolve(dir);
        String script = "p=" + Shell.quotePath(t) + "\n"
                + "[ -d \"$p\" ] || { [ -e \"$p\" ] && { echo \"not a directory: $p\" >&2; exit 3; }; exit 2; }\n"
                + "cd -- \"$p\" || exit 4\n"
                + "printf A\n"
                + "exec tar -cf - .\n";
        return runs.streamed("copyOut", t, script);
    }


    private static FileStat parseStat(String path, String name, String line) {
        String[] f = line.trim().split(" ");
        if (f.length < 3) {
            throw new BackendException("unexpected stat output for " + path + ": " + line);
        }
        int raw = Integer.parseInt(f[0], 16);
        FileStat.Type type = switch (raw & 0170000) {
            case 0100000 -> FileStat.Type.FILE;
            case 0040000 -> FileStat.Type.DIRECTORY;
            case 0120000 -> FileStat.Type.SYMLINK;
            default -> FileStat.Type.OTHER;
        };
        return new FileStat(path, name, type, Long.parseLong(f[1]), raw & 07777, Instant.ofEpochSecond(Long.parseLong(f[2])));
    }

    private static String name(String path) {
        String p = path.endsWith("/") && path.length() > 1 ? path.substring(0, path.length() - 1) : path;
        int slash = p.lastIndexOf('/');
        return slash < 0 ? p : p.substring(slash + 1);
    }

    static String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? "/" : path.substring(0, slash);
    }
}
