package dev.airlock.local.safety;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The file API against a parent symlink that flips while it writes: checked pointing at a harmless
 * directory, then pointed at ~/.ssh. The write lands where it was judged or fails, never in
 * ~/.ssh, and leaves no temp file behind anywhere.
 */
class WriteRaceTest {
    @TempDir
    Path airlockHome;

    @TempDir
    Path work;

    private SafetyFixture fx;

    @BeforeEach
    void fixture() {
        fx = new SafetyFixture(airlockHome);
    }

    @Test
    void aFlippingParentLinkNeverLandsAWriteInSsh() throws Exception {
        Path ssh = Files.createDirectories(airlockHome.resolve("home/.ssh"));
        Path safe = Files.createDirectories(work.resolve("safe"));
        Path link = work.resolve("link");
        Path spare = work.resolve("link.new");
        Files.createSymbolicLink(link, safe);
        AtomicBoolean stop = new AtomicBoolean();
        Thread flipper = new Thread(() -> {
            boolean toSsh = true;
            while (!stop.get()) {
                try {
                    Files.deleteIfExists(spare);
                    Files.createSymbolicLink(spare, toSsh ? ssh : safe);
                    Files.move(spare, link, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    toSsh = !toSsh;
                } catch (IOException e) {
                    // the next round tries again
                }
            }
        });
        int written = 0;
        int refused = 0;
        try (Environment env = fx.open(null)) {
            flipper.start();
            for (int i = 0; i < 60; i++) {
                try {
                    env.files().write(link + "/authorized_keys", ("key " + i + "\n").getBytes(StandardCharsets.UTF_8));
                    written++;
                } catch (AirlockException e) {
                    refused++;
                }
                assertFalse(Files.exists(ssh.resolve("authorized_keys"), LinkOption.NOFOLLOW_LINKS),
                        "a write replaced ~/.ssh/authorized_keys (try " + i + ")");
            }
        } finally {
            stop.set(true);
            flipper.join();
        }
        System.out.println("write race: " + written + " written to the judged place, " + refused + " refused, 0 in ~/.ssh");
        assertEquals(60, written + refused);
        assertEquals(List.of(), tempFiles(ssh), "temp files left in ~/.ssh");
        assertEquals(List.of(), tempFiles(safe), "temp files left in the safe dir");
    }

    /**
     * A directory further up the judged path swapped for a symlink to HOME between the judgement
     * and the write ({@code mv a a.real; mv a.lnk a} in a loop, as a background command can): the
     * judged path {@code work/a/.ssh/authorized_keys} is no protected file, its physical place
     * {@code ~/.ssh/authorized_keys} is; the write must never land there.
     */
    @Test
    void aDirectorySwappedForASymlinkHigherUpNeverLandsAWriteInSsh() throws Exception {
        Path home;
        int written = 0;
        int refused = 0;
        AtomicBoolean stop = new AtomicBoolean();
        Thread swapper = null;
        try (Environment env = fx.open(null)) {
            home = Path.of(env.target().home());
            Path ssh = Files.createDirectories(home.resolve(".ssh"));
            Path a = work.resolve("a");
            Path real = work.resolve("a.real");
            Path lnk = Files.createSymbolicLink(work.resolve("a.lnk"), home);
            Files.createDirectories(a.resolve(".ssh"));
            Files.createDirectories(a.resolve("d"));
            Files.createDirectories(home.resolve("d"));
            // d/.. hundreds of times: realpath walks them after it passed a, which widens the window
            String path = a + "/d/..".repeat(600) + "/.ssh/authorized_keys";
            swapper = swapper(a, real, lnk, stop);
            swapper.start();
            for (int i = 0; i < 400; i++) {
                try {
                    env.files().write(path, dev.airlock.Payload.of(("key " + i + "\n")
                            .getBytes(StandardCharsets.UTF_8)), dev.airlock.WriteOptions.defaults().withCreateParents(false));
                    written++;
                } catch (AirlockException e) {
                    refused++;
                }
                assertFalse(Files.exists(ssh.resolve("authorized_keys"), LinkOption.NOFOLLOW_LINKS),
                        "a write replaced ~/.ssh/authorized_keys (try " + i + ")");
            }
            stop.set(true);
            swapper.join();
            assertEquals(List.of(), tempFiles(ssh), "temp files left in ~/.ssh");
        } finally {
            stop.set(true);
            if (swapper != null) {
                swapper.join();
            }
        }
        System.out.println("deep swap race: " + written + " written to the judged place, " + refused + " refused, 0 in ~/.ssh");
        assertEquals(400, written + refused);
    }

    /**
     * A delete of a tree while a command swaps a directory in it for a symlink to ~/.ssh: the
     * delete removes the link, never what it points to ({@code rm -rf} holds the same rule). The
     * tree sits behind a long {@code d/..} prefix, which widens the window between the check
     * of an entry and its opening.
     */
    @Test
    void aDirectorySwappedForASymlinkDuringADeleteNeverEmptiesSsh() throws Exception {
        try (Environment env = fx.open(null)) {
            Path ssh = Files.createDirectories(Path.of(env.target().home()).resolve(".ssh"));
            Path key = Files.writeString(ssh.resolve("authorized_keys"), "operator key\n");
            Files.createDirectories(work.resolve("d"));
            String prefix = work + "/d/..".repeat(600);
            for (int i = 0; i < 500; i++) {
                Path victim = Files.createDirectories(work.resolve("victim" + i));
                Path sub = Files.createDirectories(victim.resolve("sub"));
                Files.writeString(sub.resolve("f"), "x");
                Path spare = Files.createDirectories(work.resolve("spare" + i));
                Path real = spare.resolve("real");
                Path lnk = Files.createSymbolicLink(spare.resolve("lnk"), ssh);
                AtomicBoolean stop = new AtomicBoolean();
                Thread swapper = swapper(sub, real, lnk, stop);
                swapper.start();
                try {
                    env.files().delete(prefix + "/victim" + i);
                } catch (AirlockException e) {
                    // refused or failed midway: either is fine, an emptied ~/.ssh is not
                } finally {
                    stop.set(true);
                    swapper.join();
                }
                assertTrue(Files.exists(key), "the delete removed ~/.ssh/authorized_keys through the swapped link (try " + i + ")");
            }
        }
    }

    /**
     * A directory made at the name while the content streams (a concurrent command): the write
     * fails, and neither reports success with the bytes moved into that directory nor leaves its
     * temp file there.
     */
    @Test
    void aDirectoryMadeAtTheNameMidWriteFailsTheWrite() throws Exception {
        Path target = work.resolve("f");
        byte[] data = "payload\n".getBytes(StandardCharsets.UTF_8);
        java.io.InputStream racing = new java.io.InputStream() {
            private int at;

            @Override
            public int read() throws IOException {
                if (at == 0) {
                    // Once the script made its temp file it has checked the name: then it becomes a directory.
                    for (int i = 0; i < 3000 && tempFiles(work).isEmpty(); i++) {
                        try {
                            Thread.sleep(10);
                        } catch (InterruptedException e) {
                            throw new IOException(e);
                        }
                    }
                    Files.createDirectory(target);
                }
                return at < data.length ? data[at++] & 0xff : -1;
            }
        };
        try (Environment env = fx.open(null)) {
            assertThrows(AirlockException.class,
                    () -> env.files().write(target.toString(), dev.airlock.Payload.ofStream(racing, data.length)),
                    "the write reported success though the name is a directory");
        }
        assertTrue(Files.isDirectory(target));
        assertEquals(List.of(), tempFiles(target), "temp file left in the directory");
        assertEquals(List.of(), tempFiles(work), "temp file left in the parent");
    }

    /** A path longer than the system takes fails before anything is made: no directories are left. */
    @Test
    void anOverLongPathLeavesNoDirectories() throws Exception {
        String deep = "d".repeat(200) + "/";
        Path base = work.resolve("long");
        String path = base + "/" + deep.repeat(22) + "file";
        try (Environment env = fx.open(null)) {
            AirlockException e = assertThrows(AirlockException.class, () -> env.files().write(path, new byte[] {1}));
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
            assertTrue(e instanceof ConfigurationException, e.toString());
        }
        assertFalse(Files.exists(base), "directories were left behind");
    }

    /**
     * A thread that, until {@code stop}, swaps the directory {@code dir} for the symlink {@code link}
     * and back ({@code mv dir aside; mv link dir}, then the reverse), as a racing command can.
     */
    private static Thread swapper(Path dir, Path aside, Path link, AtomicBoolean stop) {
        return new Thread(() -> {
            while (!stop.get()) {
                try {
                    Files.move(dir, aside, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(link, dir, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(dir, link, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(aside, dir, StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException e) {
                    // the file operation took or made a name in between: the next round tries again
                }
            }
        });
    }

    private static List<String> tempFiles(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".airlock-write-")).toList();
        }
    }
}
