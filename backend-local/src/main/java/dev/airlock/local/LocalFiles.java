package dev.airlock.local;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.ConfigurationException;
import dev.airlock.DeniedException;
import dev.airlock.FileStat;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.WriteOptions;
import dev.airlock.shell.SpecialFiles;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@link dev.airlock.RemoteFiles} on this host's own filesystem, for the local backend without a
 * sandbox (the core puts the write tiers in front of it). The same rules as the shell
 * implementation, without a process per call: atomic writes (see {@link LocalWrite}), entries
 * reported unfollowed, {@code ~} the children's home, relative paths from where commands start.
 * A write whose physical place differs from the path given (a symlink on the way) is handed back
 * to the guarded {@code files()} with the physical path, so the guard judges that place too.
 */
final class LocalFiles implements RemoteFiles {
    private static final LinkOption[] NOFOLLOW = {LinkOption.NOFOLLOW_LINKS};
    /** A write re-entered through a symlink more often than this gives up: the links keep changing. */
    private static final int MAX_REENTRY = 8;
    private static final ThreadLocal<int[]> REENTRY = ThreadLocal.withInitial(() -> new int[1]);

    private final Supplier<RemoteFiles> guarded;
    private final java.util.function.UnaryOperator<String> expand;
    private final Supplier<File> start;
    private final Runnable ensureOpen;

    /**
     * @param guarded the environment's {@code files()}, for a write re-judged at its physical place
     * @param expand  {@code ~} expansion (the target's)
     * @param start   where commands start (relative paths resolve there), or null for this JVM's directory
     * @param ensureOpen throws when the environment is closed (every call refuses then, as every exec does)
     */
    LocalFiles(Supplier<RemoteFiles> guarded, java.util.function.UnaryOperator<String> expand, Supplier<File> start,
               Runnable ensureOpen) {
        this.guarded = guarded;
        this.expand = expand;
        this.start = start;
        this.ensureOpen = ensureOpen;
    }

    private String resolve(String path) {
        ensureOpen.run();
        if (path == null || path.isEmpty() || path.indexOf('\0') >= 0) {
            throw new ConfigurationException("a path must be non-empty and hold no NUL byte");
        }
        return expand.apply(path);
    }

    private Path absolute(String t) {
        Path p = Path.of(t);
        if (p.isAbsolute()) {
            return p;
        }
        File base = start.get();
        return (base != null ? base.toPath() : Path.of("").toAbsolutePath()).resolve(p);
    }

    @Override
    public void write(String path, Payload content, WriteOptions options) {
        String t = resolve(path);
        LocalWrite.checkLength(t);
        Path logical = absolute(t).normalize();
        LocalWrite.Place place;
        try {
            place = LocalWrite.enter(absolute(t), options.createParents());
        } catch (IOException e) {
            throw failure("write", t, e);
        }
        try {
            if (!place.path().equals(logical)) {
                reenter(place.path().toString(), content, options);
                return;
            }
            LocalWrite.writeIn(place, t, content, options);
        } catch (IOException e) {
            LocalWrite.removeCreated(place);
            throw failure("write", t, e);
        } catch (RuntimeException e) {
            LocalWrite.removeCreated(place);
            throw e;
        }
    }

    /** The write again at its physical path, through the guard (which judges that place). */
    private void reenter(String physical, Payload content, WriteOptions options) {
        int[] depth = REENTRY.get();
        if (depth[0] >= MAX_REENTRY) {
            throw new BackendException("write to " + physical + ": the symlinks on the way keep changing; nothing was written");
        }
        depth[0]++;
        try {
            guarded.get().write(physical, content, options);
        } finally {
            depth[0]--;
        }
    }

    @Override
    public InputStream read(String path) {
        String t = resolve(path);
        Path p = absolute(t);
        if (!Files.exists(p)) {
            throw new NoSuchPathException(t);
        }
        if (Files.isDirectory(p)) {
            throw new BackendException("read " + t + " failed on local: is a directory: " + t);
        }
        try {
            return Files.newInputStream(p);
        } catch (AccessDeniedException e) {
            throw new BackendException("read " + t + " failed on local: permission denied: " + t);
        } catch (NoSuchFileException e) {
            throw new NoSuchPathException(t);
        } catch (IOException e) {
            throw failure("read", t, e);
        }
    }

    @Override
    public Optional<FileStat> stat(String path) {
        String t = resolve(path);
        Path p = absolute(t);
        if (!Files.exists(p, NOFOLLOW)) {
            return Optional.empty();
        }
        try {
            return Optional.of(statOf(p, t, name(t)));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw failure("stat", t, e);
        }
    }

    @Override
    public List<FileStat> list(String dir) {
        String t = resolve(dir);
        Path p = absolute(t);
        if (!Files.isDirectory(p)) {
            if (Files.exists(p, NOFOLLOW)) {
                throw new BackendException("list " + t + " failed on local: not a directory: " + t);
            }
            throw new NoSuchPathException(t);
        }
        List<FileStat> out = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(p)) {
            for (Path child : s) {
                String name = child.getFileName().toString();
                try {
                    out.add(statOf(child, t.endsWith("/") ? t + name : t + "/" + name, name));
                } catch (NoSuchFileException gone) {
                    // removed while listing, as the shell's loop skips it
                }
            }
        } catch (IOException e) {
            throw failure("list", t, e);
        }
        out.sort(Comparator.comparing(FileStat::name));
        return out;
    }

    private static FileStat statOf(Path p, String path, String name) throws IOException {
        Map<String, Object> a = Files.readAttributes(p, "unix:mode,size,lastModifiedTime", NOFOLLOW);
        int raw = (Integer) a.get("mode");
        FileStat.Type type = switch (raw & 0170000) {
            case 0100000 -> FileStat.Type.FILE;
            case 0040000 -> FileStat.Type.DIRECTORY;
            case 0120000 -> FileStat.Type.SYMLINK;
            default -> FileStat.Type.OTHER;
        };
        long seconds = ((FileTime) a.get("lastModifiedTime")).toInstant().getEpochSecond();
        return new FileStat(path, name, type, (Long) a.get("size"), raw & 07777, java.time.Instant.ofEpochSecond(seconds));
    }

    @Override
    public boolean delete(String path) {
        String t = resolve(path);
        if (t.equals("/") || t.isBlank()) {
            throw new DeniedException("refusing to delete '/'");
        }
        Path p = absolute(t);
        if (!Files.exists(p, NOFOLLOW)) {
            return false;
        }
        String last = p.getFileName() == null ? "" : p.getFileName().toString();
        if (last.equals(".") || last.equals("..")) {
            throw new BackendException("delete " + t + " failed on local: refusing to remove '.' or '..'; name the directory itself");
        }
        refuseSpecial(p, t);
        Path parent = p.getParent() == null ? Path.of("/") : p.getParent();
        try {
            HostDirs.removeTree(parent, p.getFileName());
        } catch (IOException | UncheckedIOException e) {
            throw new BackendException("delete " + t + " failed on local: " + e.getMessage());
        }
        return true;
    }

    /**
     * {@link SpecialFiles}' rule for a delete: never a device, FIFO or socket, nor a link that leads
     * to one, nor a tree that holds one (links in a tree are removed, never followed, so they pass).
     */
    private static void refuseSpecial(Path p, String t) {
        try {
            Optional<String> kind = kindOf(p, false).or(() -> Files.isSymbolicLink(p) ? kindOf(p, true) : Optional.empty());
            if (kind.isPresent()) {
                throw new DeniedException(SpecialFiles.message("delete", t, kind.get()));
            }
            if (Files.isDirectory(p, NOFOLLOW)) {
                try (java.util.stream.Stream<Path> all = Files.walk(p)) {
                    Optional<Path> found = all.filter(e -> kindOf(e, false).isPresent()).findFirst();
                    if (found.isPresent()) {
                        throw new DeniedException(SpecialFiles.message("delete", found.get().toString(),
                                kindOf(found.get(), false).orElseThrow()));
                    }
                }
            }
        } catch (IOException | UncheckedIOException e) {
            // unreadable parts: the removal itself reports what it cannot do
        }
    }

    /** The special kind of {@code p} (its link followed when {@code follow}), or empty (gone or unreadable too). */
    private static Optional<String> kindOf(Path p, boolean follow) {
        try {
            int mode = (Integer) (follow ? Files.getAttribute(p, "unix:mode") : Files.getAttribute(p, "unix:mode", NOFOLLOW));
            return SpecialFiles.kind(mode);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    @Override
    public void mkdirs(String dir) {
        String t = resolve(dir);
        try {
            Files.createDirectories(absolute(t));
        } catch (IOException e) {
            throw failure("mkdirs", t, e);
        }
    }

    @Override
    public void copyIn(String dir, InputStream tar) {
        String t = resolve(dir);
        Path p = absolute(t);
        try {
            Files.createDirectories(p);
            Tar.unpack(p, tar);
        } catch (IOException e) {
            throw failure("copyIn", t, e);
        }
    }

    @Override
    public InputStream copyOut(String dir) {
        String t = resolve(dir);
        Path p = absolute(t);
        if (!Files.isDirectory(p)) {
            if (Files.exists(p)) {
                throw new BackendException("copyOut " + t + " failed on local: not a directory: " + t);
            }
            throw new NoSuchPathException(t);
        }
        try {
            return Tar.pack(p);
        } catch (IOException e) {
            throw failure("copyOut", t, e);
        }
    }

    private static AirlockException failure(String op, String path, IOException e) {
        String why = e instanceof NoSuchFileException ? "no such file or directory: " + e.getMessage()
                : e instanceof AccessDeniedException ? "permission denied: " + e.getMessage()
                : String.valueOf(e.getMessage());
        return new BackendException(op + " " + path + " failed on local: " + why.lines().findFirst().orElse(""), e);
    }

    private static String name(String path) {
        String p = path.endsWith("/") && path.length() > 1 ? path.substring(0, path.length() - 1) : path;
        int slash = p.lastIndexOf('/');
        return slash < 0 ? p : p.substring(slash + 1);
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
