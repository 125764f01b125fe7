package dev.airlock.local;

import dev.airlock.BackendException;
import dev.airlock.FileStat;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.WriteOptions;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * {@code files()} under bubblewrap without a sandboxed process for the common case: a read of a
 * regular file, or a write of one, where {@link SandboxView} places the path on this host and no
 * link lies on the way. The file is reached from {@code /} one name at a time without following a
 * link (openat with O_NOFOLLOW, through a {@link SecureDirectoryStream}), so what a command does
 * meanwhile cannot move the read or the write out of the place the view gave; a write lands only
 * in a mount commands may write, with {@link LocalWrite}'s atomic replace. Everything else (links,
 * directories, special files, missing parents, set-id modes, read-only places, the listing and
 * deleting calls) goes to the core's scripts, which run inside the sandbox and so see exactly what
 * a command sees. The guard stands in front of this as in front of any native file API.
 */
final class SandboxFiles implements RemoteFiles {
    private static final LinkOption[] NOFOLLOW = {LinkOption.NOFOLLOW_LINKS};
    private static final Set<OpenOption> READ = Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);

    private final SandboxView view;
    private final Supplier<RemoteFiles> shell;
    private final UnaryOperator<String> expand;
    private final Runnable ensureOpen;

    /**
     * @param view       the sandbox's tree
     * @param shell      the core's scripts (no guard: it stands in front of this already), for what is not answered here
     * @param expand     {@code ~} expansion (the target's)
     * @param ensureOpen throws when the environment is closed
     */
    SandboxFiles(SandboxView view, Supplier<RemoteFiles> shell, UnaryOperator<String> expand, Runnable ensureOpen) {
        this.view = view;
        this.shell = shell;
        this.expand = expand;
        this.ensureOpen = ensureOpen;
    }

    /** The host file of a regular file at {@code path}, in its directory held open; empty to ask the sandbox. */
    private Optional<Held> held(String path, boolean write) {
        ensureOpen.run();
        if (path == null || path.isEmpty() || path.indexOf('\0') >= 0 || path.endsWith("/")) {
            return Optional.empty(); // the scripts give these their own answers
        }
        Path p;
        try {
            String t = expand.apply(path);
            p = t.startsWith("/") ? Path.of(t) : view.start().resolve(t);
        } catch (java.nio.file.InvalidPathException e) {
            return Optional.empty();
        }
        if (p.getParent() == null || p.getFileName() == null) {
            return Optional.empty();
        }
        Optional<SandboxView.Place> place = view.locateEntry(p);
        if (place.isEmpty() || (write && !place.get().writable()) || !p.equals(p.normalize())) {
            return Optional.empty();
        }
        Path host = place.get().host().getParent();
        SecureDirectoryStream<Path> dir = open(host);
        if (dir == null) {
            return Optional.empty();
        }
        Path name = p.getFileName();
        try {
            BasicFileAttributes a = dir.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW).readAttributes();
            if (a.isRegularFile() && reachable(host, name, write, true)) {
                return Optional.of(new Held(dir, name, host));
            }
        } catch (NoSuchFileException e) {
            if (write && reachable(host, name, true, false)) {
                return Optional.of(new Held(dir, name, host));
            }
        } catch (IOException e) {
            // unreadable: the sandbox says why
        }
        close(dir);
        return Optional.empty();
    }

    /**
     * Whether a command could read {@code name} in {@code dir} (or replace it, or make it) as this
     * JVM can. Run as any other user, a command has this JVM's uid and groups, so the kernel's
     * answer to this JVM is its answer. Run as root, see {@link SandboxView#hostPlace}: a file or
     * directory of another user counts only when its mode lets everyone do what is asked.
     */
    private static boolean reachable(Path dir, Path name, boolean write, boolean exists) {
        if (!SandboxView.ROOT) {
            return true;
        }
        for (Path d = dir; d != null; d = d.getParent()) {
            if (!SandboxView.rootMay(d, 01)) {
                return false;
            }
        }
        if (!write) {
            return SandboxView.rootMay(dir.resolve(name), 04);
        }
        if (!SandboxView.rootMay(dir, 03)) {
            return false;
        }
        if (!exists) {
            return true;
        }
        // A sticky directory of another user: only the owner of a file there may replace it.
        Optional<Map<String, Object>> d = SandboxView.attributes(dir);
        if (d.isEmpty()) {
            return false;
        }
        if (((Integer) d.get().get("mode") & 01000) == 0 || (Integer) d.get().get("uid") == 0) {
            return true;
        }
        return SandboxView.attributes(dir.resolve(name)).map(a -> (Integer) a.get("uid") == 0).orElse(false);
    }

    /** A directory held open, and the name in it. */
    private record Held(SecureDirectoryStream<Path> dir, Path name, Path hostDir) {
    }

    /**
     * {@code dir} (a host path) opened from {@code /} one name at a time, never through a link;
     * null when that fails anywhere (a link, a missing or unreadable directory): the sandbox answers.
     */
    private static SecureDirectoryStream<Path> open(Path dir) {
        SecureDirectoryStream<Path> at;
        try {
            DirectoryStream<Path> root = Files.newDirectoryStream(dir.getRoot());
            if (!(root instanceof SecureDirectoryStream<Path> s)) {
                root.close();
                return null;
            }
            at = s;
        } catch (IOException e) {
            return null;
        }
        for (Path name : dir) {
            try {
                SecureDirectoryStream<Path> next = at.newDirectoryStream(name, NOFOLLOW);
                close(at);
                at = next;
            } catch (IOException e) {
                close(at);
                return null;
            }
        }
        return at;
    }

    private static void close(SecureDirectoryStream<Path> dir) {
        try {
            dir.close();
        } catch (IOException ignored) {
            // a directory handle: nothing was written through it
        }
    }

    @Override
    public void write(String path, Payload content, WriteOptions options) {
        if (options.mode().isPresent() && (options.mode().getAsInt() & ~0777) != 0) {
            shell.get().write(path, content, options); // set-id and sticky bits: chmod in the sandbox
            return;
        }
        Optional<Held> h = held(path, true);
        if (h.isEmpty()) {
            shell.get().write(path, content, options);
            return;
        }
        String t = expand.apply(path);
        try (SecureDirectoryStream<Path> dir = h.get().dir()) {
            LocalWrite.writeInto(dir, h.get().hostDir(), h.get().name(), t, content, options);
        } catch (IOException e) {
            throw new BackendException("write " + t + " failed on local: " + String.valueOf(e.getMessage()).lines().findFirst().orElse(""), e);
        }
    }

    @Override
    public InputStream read(String path) {
        Optional<Held> h = held(path, false);
        if (h.isEmpty()) {
            return shell.get().read(path);
        }
        try (SecureDirectoryStream<Path> dir = h.get().dir()) {
            SeekableByteChannel ch = dir.newByteChannel(h.get().name(), READ);
            return Channels.newInputStream(ch);
        } catch (IOException e) {
            return shell.get().read(path); // gone or changed since it was looked at: the sandbox says what is there now
        }
    }

    @Override
    public Optional<FileStat> stat(String path) {
        return shell.get().stat(path);
    }

    @Override
    public List<FileStat> list(String dir) {
        return shell.get().list(dir);
    }

    @Override
    public boolean delete(String path) {
        return shell.get().delete(path);
    }

    @Override
    public void mkdirs(String dir) {
        shell.get().mkdirs(dir);
    }

    @Override
    public void copyIn(String dir, InputStream tar) {
        shell.get().copyIn(dir, tar);
    }

    @Override
    public InputStream copyOut(String dir) {
        return shell.get().copyOut(dir);
    }
}
