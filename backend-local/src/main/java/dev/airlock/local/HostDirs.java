package dev.airlock.local;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Deque;
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

    /** As {@code rm -rf -- DIR}, never following a link; true when nothing is left. */
    static boolean removeTree(Path dir) {
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                    Files.deleteIfExists(file); // an entry that cannot be read may still be removed
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            // best effort; what is left is reported below
        }
        return !Files.exists(dir, LinkOption.NOFOLLOW_LINKS);
    }
}
