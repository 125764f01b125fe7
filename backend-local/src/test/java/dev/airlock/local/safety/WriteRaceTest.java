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

    private static List<String> tempFiles(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".airlock-write-")).toList();
        }
    }
}
