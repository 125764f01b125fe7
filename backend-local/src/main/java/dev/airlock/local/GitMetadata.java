package dev.airlock.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The parts of a git checkout that make the host's git run code: the config (core.fsmonitor,
 * core.pager, aliases, filters, hook paths), the hooks, and {@code info/} (attributes and
 * excludes that select filters). A sandbox binds them read-only inside a writable workdir, so a
 * command cannot leave code for the operator's next {@code git status}; the rest of the checkout
 * (objects, refs, the index, the work tree) stays writable, so git in the sandbox works.
 *
 * <p>Found from the directory's {@code .git} (a directory, or a file naming the git dir of a
 * worktree or submodule, with its {@code commondir}), the git dirs of its submodules under
 * {@code modules/}, and what the config points at: {@code core.hooksPath}, a {@code core.fsmonitor}
 * hook program, {@code include.path} and {@code includeIf.*.path} files.
 */
final class GitMetadata {
    /** Entries of a git dir that decide what git runs. */
    static final List<String> CODE = List.of("config", "hooks", "info");

    /** A path to pin read-only, and what to make in its place when it is missing. */
    record Pin(Path path, boolean directory) {
    }

    private GitMetadata() {
    }

    /** The paths to pin read-only for a checkout at {@code dir} (empty when it is none). Missing ones included. */
    static List<Pin> of(Path dir) {
        Set<Pin> out = new LinkedHashSet<>();
        gitDir(dir).ifPresent(g -> {
            addGitDir(g, dir, out);
            commonDir(g).ifPresent(c -> addGitDir(c, dir, out));
        });
        return new ArrayList<>(out);
    }

    private static void addGitDir(Path gitDir, Path workTree, Set<Pin> out) {
        code(gitDir, out);
        out.addAll(configTargets(gitDir.resolve("config"), workTree));
        Path modules = gitDir.resolve("modules");
        if (Files.isDirectory(modules, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> s = Files.walk(modules, 6)) {
                s.filter(p -> Files.isRegularFile(p.resolve("HEAD"), LinkOption.NOFOLLOW_LINKS))
                        .forEach(sub -> code(sub, out));
            } catch (IOException | java.io.UncheckedIOException e) {
                // an unreadable modules dir: its submodules' configs stay as the filesystem has them
            }
        }
    }

    private static void code(Path gitDir, Set<Pin> out) {
        for (String e : CODE) {
            out.add(new Pin(gitDir.resolve(e), !e.equals("config")));
        }
    }

    /** {@code dir/.git} itself, or the git dir a {@code .git} file names ({@code gitdir: PATH}). */
    static Optional<Path> gitDir(Path dir) {
        Path dotGit = dir.resolve(".git");
        if (Files.isDirectory(dotGit, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.of(dotGit);
        }
        if (Files.isRegularFile(dotGit, LinkOption.NOFOLLOW_LINKS)) {
            return firstLine(dotGit).filter(l -> l.startsWith("gitdir:"))
                    .map(l -> dir.resolve(l.substring("gitdir:".length()).strip()).normalize());
        }
        return Optional.empty();
    }

    private static Optional<Path> commonDir(Path gitDir) {
        return firstLine(gitDir.resolve("commondir")).filter(l -> !l.isBlank()).map(l -> gitDir.resolve(l.strip()).normalize());
    }

    /**
     * Files and dirs the config names that git reads or runs: a hooks path, an fsmonitor hook
     * (not {@code true}/{@code false}, which mean the built-in one), included configs. Relative
     * paths as git takes them: hooks and fsmonitor from the work tree, includes from the config's dir.
     */
    static List<Pin> configTargets(Path config, Path workTree) {
        List<Pin> out = new ArrayList<>();
        List<String> lines;
        try {
            lines = Files.readAllLines(config, StandardCharsets.UTF_8);
        } catch (IOException | java.io.UncheckedIOException e) {
            return out;
        }
        String section = "";
        for (String raw : lines) {
            String line = raw.strip();
            if (line.startsWith("[")) {
                int end = line.indexOf(']');
                String name = (end < 0 ? line.substring(1) : line.substring(1, end)).strip();
                int space = name.indexOf(' ');
                section = (space < 0 ? name : name.substring(0, space)).toLowerCase(Locale.ROOT);
                line = end < 0 ? "" : line.substring(end + 1).strip(); // "[core] hooksPath = x" on one line
            }
            int eq = line.indexOf('=');
            if (eq < 0 || line.startsWith("#") || line.startsWith(";")) {
                continue;
            }
            String key = line.substring(0, eq).strip().toLowerCase(Locale.ROOT);
            String value = unquote(line.substring(eq + 1).strip());
            if (value.isEmpty()) {
                continue;
            }
            if (section.equals("core") && key.equals("hookspath")) {
                out.add(new Pin(path(value, workTree), true));
            } else if (section.equals("core") && key.equals("fsmonitor")
                    && !List.of("true", "false", "yes", "no", "on", "off", "1", "0").contains(value.toLowerCase(Locale.ROOT))) {
                out.add(new Pin(path(value, workTree), false));
            } else if ((section.equals("include") || section.equals("includeif")) && key.equals("path")) {
                out.add(new Pin(path(value, config.getParent()), false));
            }
        }
        return out;
    }

    private static Path path(String value, Path base) {
        String home = System.getProperty("user.home", "/");
        String v = value.startsWith("~/") ? home + value.substring(1) : value;
        return base.resolve(v).normalize();
    }

    private static String unquote(String v) {
        int hash = v.startsWith("\"") ? -1 : v.indexOf(" #");
        String s = hash < 0 ? v : v.substring(0, hash).strip();
        return s.length() >= 2 && s.startsWith("\"") && s.endsWith("\"") ? s.substring(1, s.length() - 1) : s;
    }

    private static Optional<String> firstLine(Path f) {
        try (Stream<String> lines = Files.lines(f, StandardCharsets.UTF_8)) {
            return lines.findFirst();
        } catch (IOException | java.io.UncheckedIOException e) {
            return Optional.empty();
        }
    }
}
