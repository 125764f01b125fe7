package dev.airlock.local;

import dev.airlock.DeniedException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 31, door 4, on the local backend's native files with {@code isolation=none} (the route of
 * {@code printf X | airlock write /dev/urandom} and MCP {@code delete /dev/random}): a write or
 * delete never replaces or removes a device, FIFO or socket, nor goes through a link to one.
 * Real entries in a temp dir, never the real /dev; the device is made like /dev/null, as root.
 */
class SpecialFilesNativeTest {

    private static Settings settings(Path airlockHome) {
        return Settings.of("airlock.container", "no", "airlock.home-mode", "profile", "airlock.home", airlockHome.toString(),
                "airlock.local.isolation", "none");
    }

    private static int typeBits(Path p) throws Exception {
        return ((Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS)) & 0170000;
    }

    private static int run(String... argv) throws Exception {
        return new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
    }

    @ParameterizedTest
    @ValueSource(strings = {"a FIFO", "a socket", "a character device"})
    void neitherWriteNorDeleteReplacesOrRemovesIt(String kind, @TempDir Path airlockHome, @TempDir Path dir) throws Exception {
        Path entry = dir.resolve("tree/entry");
        Files.createDirectories(entry.getParent());
        ServerSocketChannel socket = null;
        switch (kind) {
            case "a FIFO" -> assertEquals(0, run("mkfifo", entry.toString()));
            case "a socket" -> {
                socket = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                socket.bind(UnixDomainSocketAddress.of(entry));
            }
            default -> Assumptions.assumeTrue(run("mknod", entry.toString(), "c", "1", "3") == 0,
                    "mknod of a character device needs root with CAP_MKNOD, which this run lacks");
        }
        try (Environment env = Environments.open(settings(airlockHome))) {
            int bits = typeBits(entry);
            Path link = Files.createSymbolicLink(dir.resolve("link"), entry);
            DeniedException e = assertThrows(DeniedException.class,
                    () -> env.files().write(entry.toString(), "X".getBytes(StandardCharsets.UTF_8)));
            assertEquals("write to " + entry + " refused: it is " + kind + ", which Airlock never replaces or removes;"
                    + " name a regular file (run a command, under the guard, if you mean to change it)", e.getMessage());
            e = assertThrows(DeniedException.class, () -> env.files().write(link.toString(), "X".getBytes(StandardCharsets.UTF_8)));
            assertTrue(e.getMessage().contains(" refused: it is " + kind + ","), e.getMessage());
            e = assertThrows(DeniedException.class, () -> env.files().delete(entry.toString()));
            assertTrue(e.getMessage().startsWith("delete " + entry + " refused: it is " + kind + ","), e.getMessage());
            e = assertThrows(DeniedException.class, () -> env.files().delete(link.toString()));
            assertTrue(e.getMessage().startsWith("delete " + link + " refused: it is " + kind + ","), e.getMessage());
            e = assertThrows(DeniedException.class, () -> env.files().delete(dir.resolve("tree").toString()));
            assertTrue(e.getMessage().startsWith("delete " + entry + " refused: it is " + kind + ","), e.getMessage());
            assertEquals(bits, typeBits(entry), "the entry was replaced or removed");
            assertTrue(Files.isSymbolicLink(link), "the link was replaced or removed");
            try (var s = Files.walk(dir)) {
                assertEquals(0, s.filter(p -> p.getFileName().toString().startsWith(".airlock-write-")).count(), "a temp file was left");
            }
        } finally {
            if (socket != null) {
                socket.close();
            }
        }
    }

    @Test
    void ordinaryFilesLinksAndTreesAreWrittenAndDeletedAsBefore(@TempDir Path airlockHome, @TempDir Path dir) throws Exception {
        Path f = dir.resolve("f.txt");
        Path fifo = dir.resolve("fifo");
        assertEquals(0, run("mkfifo", fifo.toString()));
        try (Environment env = Environments.open(settings(airlockHome))) {
            env.files().write(f.toString(), "one".getBytes(StandardCharsets.UTF_8));
            Path link = Files.createSymbolicLink(dir.resolve("link"), f);
            env.files().write(link.toString(), "two".getBytes(StandardCharsets.UTF_8));
            assertEquals("two", Files.readString(f));
            assertTrue(Files.isSymbolicLink(link));
            assertTrue(env.files().delete(link.toString()));
            assertTrue(Files.exists(f), "deleting a link leaves its target");
            Path tree = Files.createDirectories(dir.resolve("tree/sub"));
            Files.writeString(tree.resolve("a"), "a");
            Files.createSymbolicLink(tree.resolve("to-fifo"), fifo);
            assertTrue(env.files().delete(dir.resolve("tree").toString()));
            assertFalse(Files.exists(dir.resolve("tree"), LinkOption.NOFOLLOW_LINKS));
            assertEquals(0010000, typeBits(fifo), "a link in a deleted tree is removed, never followed");
            assertTrue(env.files().delete(f.toString()));
        }
    }
    /**
     * The last check, in the held directory just before the rename: an entry made at the name after
     * the guarded files looked (a command racing the write) is not replaced either.
     */
    @Test
    void theRenameNeverReplacesAFifoOrALinkThatAppearedMeanwhile(@TempDir Path dir) throws Exception {
        Path fifo = dir.resolve("fifo");
        assertEquals(0, run("mkfifo", fifo.toString()));
        LocalWrite.Place place = LocalWrite.enter(fifo, false); // as if it was judged before the FIFO came
        DeniedException e = assertThrows(DeniedException.class, () -> LocalWrite.writeIn(place, fifo.toString(),
                dev.airlock.Payload.ofUtf8("X"), dev.airlock.WriteOptions.defaults()));
        assertTrue(e.getMessage().startsWith("write to " + fifo + " refused: it is a FIFO,"), e.getMessage());
        assertEquals(0010000, typeBits(fifo), "the FIFO was replaced");
        Path real = Files.writeString(dir.resolve("real"), "old");
        Path name = dir.resolve("name");
        LocalWrite.Place before = LocalWrite.enter(name, false); // nothing there yet
        Files.createSymbolicLink(name, real);
        dev.airlock.BackendException x = assertThrows(dev.airlock.BackendException.class, () -> LocalWrite.writeIn(before,
                name.toString(), dev.airlock.Payload.ofUtf8("X"), dev.airlock.WriteOptions.defaults()));
        assertTrue(x.getMessage().contains("a symlink appeared at"), x.getMessage());
        assertTrue(Files.isSymbolicLink(name), "the link was replaced");
        assertEquals("old", Files.readString(real));
        try (var s = Files.list(dir)) {
            assertEquals(0, s.filter(p -> p.getFileName().toString().startsWith(".airlock-write-")).count(), "a temp file was left");
        }
    }
}
