package dev.airlock.local;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/** Airlock's own directories on this host, made and removed in Java where a script would cost its processes. */
final class HostDirs {
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_ATTR = PosixFilePermissions.asFileAttribute(OWNER_ONLY);

    private HostDirs() {
    }

    /** {@code mkdir DIR} under umask 077: 0700 whatever the JVM's umask. */
    static void mkdir700(Path dir) throws IOException {
        Files.createDirectory(dir, OWNER_ONLY_ATTR);
        Files.setPosixFilePermissions(dir, OWNER_ONLY);
    }

    /**
     * As {@code umask 077; mkdir -p -- DIR}: each missing directory 0700. False, having made
     * perhaps some, when DIR is not absolute or cannot be made (the script then says why).
     */
    static boolean makeDirs(String dir) {
        if (!dir.startsWith("/")) {
            return false;
        }
        Deque<Path> missing = new ArrayDeque<>();
        for (Path p = Path.of(dir); !Files.isDirectory(p); p = p.getParent()) {
            if (p.getParent() == null || Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                return false; // a file, or a link to nowhere, in the way
            }
            missing.push(p);
        }
        try {
            for (Path p : missing) {
                mkdir700(p);
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * As {@code rm -rf -- DIR}, never following a link (not even one a command swaps in for a
     * directory while the tree is removed); true when nothing is left.
     */
    static boolean removeTree(Path dir) {
        Path parent = dir.getParent();
        if (parent == null || dir.getFileName() == null) {
            return false;
        }
        try {
            removeTree(parent, dir.getFileName());
        } catch (IOException | java.io.UncheckedIOException e) {
            // best effort; what is left is reported below (and the script's rm -rf tries again)
        }
        return !Files.exists(dir, LinkOption.NOFOLLOW_LINKS);
    }

    /** How long each of {@link #removeQuiescent}'s two programs may take. */
    private static final java.time.Duration BOUND = java.time.Duration.ofSeconds(30);

    /**
     * {@code chmod -R u+rwx}, then {@code rm -rf}, as processes of this host: for a tree no process
     * can change meanwhile (every command that could is dead), where a directory without read or
     * search permission stops {@link #removeTree} for a user who is not root. {@code chmod -R} and
     * {@code rm -rf} follow no link inside the tree; a link at {@code dir} itself is left to the
     * caller's other steps (nothing here would follow it). True when nothing is left.
     */
    static boolean removeQuiescent(Path dir) {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return !Files.exists(dir, LinkOption.NOFOLLOW_LINKS);
        }
        // chmod's exit is not asked: a directory not ours fails it, and rm says what is left.
        HostRun.succeeds(List.of("chmod", "-R", "u+rwx", "--", dir.toString()), BOUND);
        HostRun.succeeds(List.of("rm", "-rf", "--", dir.toString()), BOUND);
        return !Files.exists(dir, LinkOption.NOFOLLOW_LINKS);
    }

    /** rm -rf of {@code name} in the directory {@code parent}, through directory handles (see below). */
    static void removeTree(Path parent, Path name) throws IOException {
        try (DirectoryStream<Path> opened = Files.newDirectoryStream(parent)) {
            if (!(opened instanceof SecureDirectoryStream<Path> dir)) {
                throw new IOException("this filesystem gives no directory handle to delete through");
            }
            removeTree(dir, name);
        }
    }

    /**
     * rm -rf of {@code name} in {@code dir}, through directory handles (openat with O_NOFOLLOW,
     * unlinkat): links are removed, never followed, even one swapped in for a directory while the
     * tree is removed (that directory then fails to open and the call fails); what cannot be
     * removed fails the call.
     */
    private static void removeTree(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        removeTree(dir, name, 0);
    }

    /**
     * How deep a tree is removed here, one open directory handle a level: a command can make a
     * tree deeper than this JVM's stack or its file descriptors go. Deeper fails the call, and
     * {@code rm -rf} (which walks any depth) gets what is left.
     */
    static final int MAX_DEPTH = 512;

    private static void removeTree(SecureDirectoryStream<Path> dir, Path name, int depth) throws IOException {
        if (depth >= MAX_DEPTH) {
            throw new IOException("the tree is deeper than " + MAX_DEPTH + " directories");
        }
        BasicFileAttributes a;
        try {
            a = dir.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).readAttributes();
        } catch (NoSuchFileException gone) {
            return;
        }
        if (!a.isDirectory()) {
            deleteQuietly(dir, name, false);
            return;
        }
        try (SecureDirectoryStream<Path> sub = dir.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
            openUp(sub);
            List<Path> children = new ArrayList<>();
            sub.forEach(c -> children.add(c.getFileName()));
            for (Path c : children) {
                removeTree(sub, c, depth + 1);
            }
        }
        deleteQuietly(dir, name, true);
    }

    /**
     * Gives the owner read, write and search on a directory about to be emptied: a command may have
     * left one it made read-only ({@code chmod 500}), which {@code rm -rf} run by its owner cannot
     * empty (root's can), so the environment's private dir would outlive close. Through the handle
     * of the directory already open ({@code fstat}, {@code fchmod}): no name is looked up again, so
     * nothing swapped in meanwhile (a link, a FIFO, a hard link to a file) is touched. A directory
     * this user may not open ({@code chmod 000}) fails the walk before this, and the core's script
     * ({@code chmod -R u+rwx}, then {@code rm -rf}) takes it; one not ours keeps its mode.
     */
    private static void openUp(SecureDirectoryStream<Path> opened) {
        try {
            PosixFileAttributeView v = opened.getFileAttributeView(PosixFileAttributeView.class);
            Set<PosixFilePermission> mode = EnumSet.noneOf(PosixFilePermission.class);
            mode.addAll(v.readAttributes().permissions());
            if (mode.addAll(OWNER_ALL)) {
                v.setPermissions(mode);
            }
        } catch (IOException | UnsupportedOperationException e) {
            // not ours: the removal says what is left
        }
    }

    private static final Set<PosixFilePermission> OWNER_ALL = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);

    private static void deleteQuietly(SecureDirectoryStream<Path> dir, Path name, boolean directory) throws IOException {
        try {
            if (directory) {
                dir.deleteDirectory(name);
            } else {
                dir.deleteFile(name);
            }
        } catch (NoSuchFileException gone) {
            // removed meanwhile, as rm -f takes it
        }
    }

}
