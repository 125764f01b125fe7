package dev.airlock.local;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The profile home and the private dir's removal in Java do what the scripts they replace did. */
class HostDirsTest {
    @TempDir
    Path dir;

    @Test
    void makeDirsIsMkdirPUnderUmask077() throws Exception {
        Path kept = Files.createDirectory(dir.resolve("kept"));
        Files.setPosixFilePermissions(kept, PosixFilePermissions.fromString("rwxr-x---"));
        assertTrue(HostDirs.makeDirs(kept + "/a/b/home"));
        sh("umask 077; mkdir -p -- \"$0\"", kept + "/c/d/home");
        for (String p : new String[] {"a", "a/b", "a/b/home"}) {
            String script = p.replace('a', 'c').replace('b', 'd');
            assertEquals(mode(kept.resolve(script)), mode(kept.resolve(p)), p);
        }
        assertEquals("rwx------", mode(kept.resolve("a/b/home")));
        assertEquals("rwxr-x---", mode(kept), "an existing dir keeps its mode");
        assertTrue(HostDirs.makeDirs(kept + "/a/b/home"), "an existing home is made already");
        Files.writeString(kept.resolve("file"), "x");
        assertFalse(HostDirs.makeDirs(kept + "/file/home"), "a file in the way: the script says why");
        assertFalse(HostDirs.makeDirs("relative/home"));
    }

    @Test
    void removeTreeIsRmRfAndNeverFollowsALink() throws Exception {
        Path outside = Files.writeString(dir.resolve("outside"), "keep me");
        Path priv = Files.createDirectories(dir.resolve("airlock-x/run/deep"));
        Files.writeString(priv.resolve("f"), "x");
        Files.createSymbolicLink(dir.resolve("airlock-x/tmp-link"), outside);
        Files.createSymbolicLink(dir.resolve("airlock-x/dir-link"), dir);
        Path locked = Files.createDirectory(dir.resolve("airlock-x/locked"));
        Files.writeString(locked.resolve("g"), "y");
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("r-x------"));
        assertTrue(HostDirs.removeTree(dir.resolve("airlock-x")));
        assertFalse(Files.exists(dir.resolve("airlock-x"), LinkOption.NOFOLLOW_LINKS));
        assertEquals("keep me", Files.readString(outside));
        assertTrue(HostDirs.removeTree(dir.resolve("airlock-x")), "gone already");
    }

    /**
     * A tree deeper than the removal walks (a command can make one deeper than this JVM's stack)
     * fails the call with nothing thrown, so {@code rm -rf} gets it; a shallower one goes whole.
     */
    @Test
    void aTreeTooDeepToWalkFailsTheCallInsteadOfTheStack() throws Exception {
        Path deep = dir.resolve("airlock-deep");
        Path p = deep;
        for (int i = 0; i <= HostDirs.MAX_DEPTH; i++) {
            p = p.resolve("d");
        }
        Files.createDirectories(p);
        assertFalse(HostDirs.removeTree(deep));
        assertTrue(Files.isDirectory(deep));
        Path shallow = dir.resolve("airlock-shallow");
        Files.createDirectories(shallow.resolve("d/".repeat(HostDirs.MAX_DEPTH - 2)));
        assertTrue(HostDirs.removeTree(shallow));
    }

    /**
     * A command still running at close swaps a directory of the private dir for a link to a place
     * of the user's while the removal walks it: nothing there is removed (the walk works through
     * directory handles and never follows the link).
     */
    @Test
    void aDirectorySwappedForALinkDuringTheRemovalIsNeverFollowed() throws Exception {
        for (int round = 0; round < 5; round++) {
            Path victim = Files.createDirectories(dir.resolve("victim-" + round));
            Path priv = Files.createDirectories(dir.resolve("airlock-r" + round + "/tmp/a"));
            for (int i = 0; i < 3000; i++) {
                Files.writeString(victim.resolve("f" + i), "keep"); // the same names: a path-based walk would hit them
                Files.writeString(priv.resolve("f" + i), "x");
            }
            Thread swapper = new Thread(() -> {
                try {
                    while (Files.exists(priv.resolve("f0"))) {
                        Thread.onSpinWait(); // until the removal is inside the directory
                    }
                    while (Files.isDirectory(priv, LinkOption.NOFOLLOW_LINKS)) {
                        try {
                            Files.move(priv, priv.resolveSibling("moved"));
                            Files.createSymbolicLink(priv, victim);
                            return;
                        } catch (java.io.IOException e) {
                            // the walk got there first: try again
                        }
                    }
                } catch (RuntimeException ignored) {
                    // the tree is gone
                }
            });
            swapper.start();
            HostDirs.removeTree(dir.resolve("airlock-r" + round));
            swapper.join();
            try (var left = Files.list(victim)) {
                assertEquals(3000, left.count(), "round " + round + ": the removal followed a swapped-in link into the user's files");
            }
        }
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    private static void sh(String script, String arg) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", script, arg).inheritIO().start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue());
    }
}
