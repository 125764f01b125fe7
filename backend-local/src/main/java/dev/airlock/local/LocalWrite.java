package dev.airlock.local;

import dev.airlock.BackendException;
import dev.airlock.ConfigurationException;
import dev.airlock.DeniedException;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import dev.airlock.shell.KernelRandom;
import dev.airlock.shell.SpecialFiles;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;

/**
 * {@code files().write} on this host's own filesystem, with the shell implementation's rules:
 * the target's symlink is followed and the physical place judged by the guard again; the temp
 * file (0600 while written) is made, sized, given its mode and renamed over the name inside the
 * judged directory held open (reached from {@code /} by openat with O_NOFOLLOW, then renameat,
 * through a {@link SecureDirectoryStream}), so a symlink swapped in anywhere on the way meanwhile
 * cannot move the write; a link, device, FIFO or socket found at the name just before the rename
 * is refused (see {@link SpecialFiles}), and one planted after that check is replaced, never
 * followed. Directories the write made are removed again when it fails.
 */
final class LocalWrite {
    private static final int PATH_MAX = 4095;
    private static final int NAME_MAX = 255;
    private static final int MAX_LINKS = 40;
    private static final SecureRandom RANDOM = KernelRandom.create();
    /** One transferTo call's most (the JDK copies up to 2 GiB per call anyway). */
    private static final long TRANSFER_STEP = 1L << 30;
    private static final LinkOption[] NOFOLLOW = {LinkOption.NOFOLLOW_LINKS};

    private LocalWrite() {
    }

    /** Where a write lands: the physical directory, the name in it, and the first directory this write made (if any). */
    record Place(Path dir, String name, Optional<Path> createdFrom) {
        Path path() {
            return dir.resolve(name);
        }
    }

    static void checkLength(String t) {
        int bytes = t.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > PATH_MAX) {
            throw new ConfigurationException("the path is " + bytes + " bytes long; the target takes at most "
                    + PATH_MAX + " (" + t.substring(0, Math.min(60, t.length())) + "...)");
        }
        for (String c : t.split("/")) {
            if (c.getBytes(StandardCharsets.UTF_8).length > NAME_MAX) {
                throw new ConfigurationException("a name in the path is longer than " + NAME_MAX + " bytes ("
                        + c.substring(0, Math.min(60, c.length())) + "...)");
            }
        }
    }

    /**
     * Finds the physical place of {@code t} (an absolute path): a symlink at {@code t} is followed
     * to its end ({@code readlink -f}); the parent is made when asked and resolved physically.
     */
    static Place enter(Path t, boolean createParents) throws IOException {
        Path p = t;
        for (int i = 0; Files.isSymbolicLink(p); i++) {
            if (i >= MAX_LINKS) {
                throw new IOException("cannot resolve the symlink " + t + ": too many levels");
            }
            Path link = Files.readSymbolicLink(p);
            Path parent = p.getParent() == null ? Path.of("/") : p.getParent();
            p = (parent.toRealPath()).resolve(link).normalize();
        }
        Path name = p.getFileName();
        if (name == null) {
            throw new IOException("is a directory: " + t);
        }
        Path dir = p.getParent() == null ? Path.of("/") : p.getParent();
        Optional<Path> created = Optional.empty();
        if (!Files.isDirectory(dir)) {
            if (!createParents) {
                throw new NoSuchPathException(dir.toString());
            }
            Path e = dir;
            while (e.getParent() != null && !Files.isDirectory(e)) {
                e = e.getParent();
            }
            Path existing = e;
            Files.createDirectories(dir);
            created = Optional.of(existing.toRealPath());
        }
        return new Place(dir.toRealPath(), name.toString(), created);
    }

    /** Removes the (empty) directories the write made, deepest first, up to the one that existed. */
    static void removeCreated(Place place) {
        if (place.createdFrom().isEmpty()) {
            return;
        }
        Path stop = place.createdFrom().get();
        for (Path c = place.dir(); c != null && !c.equals(stop) && c.getParent() != null; c = c.getParent()) {
            try {
                Files.delete(c);
            } catch (IOException e) {
                return; // not empty (someone else's file) or gone: stop as rmdir would
            }
        }
    }

    /** Writes {@code content} into the place, as described on the class. */
    static void writeIn(Place place, String t, Payload content, WriteOptions options) throws IOException {
        try (SecureDirectoryStream<Path> dir = openPhysical(place.dir(), t)) {
            Path name = Path.of(place.name());
            Optional<Integer> existingMode = modeOf(dir, name, place.path());
            if (existingMode.isEmpty() && isDirectory(dir, name)) {
                throw new BackendException("write " + t + " failed on local: is a directory: " + t);
            }
            Path tmp = Path.of(".airlock-write-" + HexFormat.of().formatHex(bytes()));
            boolean renamed = false;
            try {
                long written;
                try (SeekableByteChannel ch = dir.newByteChannel(tmp, Set.<java.nio.file.OpenOption>of(StandardOpenOption.CREATE_NEW,
                        StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS), PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rw-------")))) {
                    written = copy(content, ch);
                }
                long expected = content.length().orElse(-1);
                if (expected >= 0 && written != expected) {
                    throw new BackendException("write " + t + " failed on local: wrote " + written + " of " + expected + " bytes");
                }
                int mode = options.mode().isPresent() ? options.mode().getAsInt() : existingMode.orElseGet(LocalWrite::defaultMode);
                setMode(dir, tmp, place.dir().resolve(tmp), mode);
                refuseSpecial(dir, name, place.path(), t);
                try {
                    dir.move(tmp, dir, name); // renameat: replaces a file or a link at the name, never follows it
                } catch (IOException e) {
                    if (isDirectory(dir, name)) {
                        throw new BackendException("write " + t + " failed on local: is a directory (made while writing): " + t);
                    }
                    throw e;
                }
                renamed = true;
            } finally {
                if (!renamed) {
                    try {
                        dir.deleteFile(tmp);
                    } catch (IOException ignored) {
                        // never made, or already gone
                    }
                }
            }
        }
    }

    /**
     * The judged directory held open, reached from {@code /} one name at a time without following
     * a link (openat with O_NOFOLLOW): a directory anywhere on the way swapped for a symlink since
     * it was judged fails the write instead of moving it. {@code dir} is a real path, so a link on
     * the way means it changed.
     */
    private static SecureDirectoryStream<Path> openPhysical(Path dir, String t) throws IOException {
        DirectoryStream<Path> opened = Files.newDirectoryStream(dir.getRoot());
        if (!(opened instanceof SecureDirectoryStream<Path> at)) {
            opened.close();
            throw new IOException("this filesystem gives no directory handle to write through");
        }
        try {
            for (Path name : dir) {
                SecureDirectoryStream<Path> next = at.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
                at.close();
                at = next;
            }
            return at;
        } catch (java.nio.file.AccessDeniedException e) {
            at.close();
            throw e;
        } catch (IOException e) {
            at.close();
            throw new BackendException("write to " + t + ": the directory changed while writing; nothing was written");
        }
    }

    private static byte[] bytes() {
        byte[] b = new byte[5];
        RANDOM.nextBytes(b);
        return b;
    }

    private static long copy(Payload content, SeekableByteChannel ch) throws IOException {
        long n = 0;
        try (InputStream in = content.open()) {
            if (in instanceof FileInputStream file && ch instanceof FileChannel to) {
                return transfer(file.getChannel(), to);
            }
            // No bigger than the payload: a 4 KiB write need not allocate (and zero) 256 KiB.
            byte[] buf = new byte[(int) Math.min(256 * 1024, Math.max(content.length().orElse(256 * 1024), 8192))];
            ByteBuffer bb = ByteBuffer.wrap(buf);
            for (int r; (r = in.read(buf)) >= 0; ) {
                bb.clear().limit(r);
                while (bb.hasRemaining()) {
                    ch.write(bb);
                }
                n += r;
            }
        }
        return n;
    }

    /** A file payload, copied by the kernel (no pass through this JVM's buffers), to its end as a stream read would. */
    private static long transfer(FileChannel from, FileChannel to) throws IOException {
        long n = 0;
        for (long t; (t = from.transferTo(n, TRANSFER_STEP, to)) > 0; ) {
            n += t;
        }
        return n;
    }

    /** The mode bits (with set-id and sticky) of a regular file at the name; a symlink or anything else: none. */
    private static Optional<Integer> modeOf(SecureDirectoryStream<Path> dir, Path name, Path absolute) throws IOException {
        try {
            if (!dir.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW).readAttributes().isRegularFile()) {
                return Optional.empty();
            }
            return Optional.of(((Integer) Files.getAttribute(absolute, "unix:mode", NOFOLLOW)) & 07777);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /**
     * {@link SpecialFiles}' rule again at the last moment before the rename, in the held directory
     * (the guarded files checked it before the write began): a device, FIFO or socket at the name
     * is never replaced, nor a symlink, which no write leaves there (a link is followed first).
     */
    private static void refuseSpecial(SecureDirectoryStream<Path> dir, Path name, Path absolute, String t) throws IOException {
        java.nio.file.attribute.BasicFileAttributes a;
        try {
            a = dir.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW).readAttributes();
        } catch (NoSuchFileException e) {
            return;
        }
        if (a.isSymbolicLink()) {
            throw new BackendException("write " + t + " failed on local: a symlink appeared at " + absolute
                    + " while writing; nothing was written (write again)");
        }
        if (a.isOther()) {
            int mode = (Integer) Files.getAttribute(absolute, "unix:mode", NOFOLLOW);
            throw new DeniedException(SpecialFiles.message("write to", t, SpecialFiles.kind(mode).orElse("not a regular file")));
        }
    }

    private static boolean isDirectory(SecureDirectoryStream<Path> dir, Path name) {
        try {
            return dir.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW).readAttributes().isDirectory();
        } catch (IOException e) {
            return false;
        }
    }

    private static void setMode(SecureDirectoryStream<Path> dir, Path tmp, Path absolute, int mode) throws IOException {
        if ((mode & ~0777) == 0) {
            Set<PosixFilePermission> perms = EnumSet.noneOf(PosixFilePermission.class);
            for (PosixFilePermission p : PosixFilePermission.values()) {
                if ((mode & (1 << (8 - p.ordinal()))) != 0) {
                    perms.add(p);
                }
            }
            dir.getFileAttributeView(tmp, PosixFileAttributeView.class, NOFOLLOW).setPermissions(perms);
            return;
        }
        // setuid, setgid, sticky: chmod by path (the temp name is ours, random, in the judged directory).
        try {
            Process p = new ProcessBuilder("chmod", Integer.toOctalString(mode), "--", absolute.toString())
                    .redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (p.waitFor() != 0) {
                throw new IOException("chmod " + Integer.toOctalString(mode) + ": " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while setting the mode");
        }
    }

    /** 0666 without this process's umask (Linux reports it in /proc/self/status), as a new file gets. */
    static int defaultMode() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Umask:")) {
                    return 0666 & ~Integer.parseInt(line.substring(6).strip(), 8);
                }
            }
        } catch (IOException | RuntimeException e) {
            // an old kernel: the common umask
        }
        return 0644;
    }
}
