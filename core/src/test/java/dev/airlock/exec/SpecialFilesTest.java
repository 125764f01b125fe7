package dev.airlock.exec;

import dev.airlock.DeniedException;
import dev.airlock.RemoteFiles;
import dev.airlock.StdinMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 31, door 4, on the shell route ({@link ShellFiles}, the route of every backend without
 * native files): no write or delete replaces or removes a device, FIFO or socket, reached directly,
 * through a symlink or inside a tree, while ordinary files, links and trees are written and deleted
 * as before. Real entries in a temp dir (never the real /dev): a FIFO, a unix socket, and as root a
 * character device made like /dev/null.
 */
class SpecialFilesTest {
    @TempDir
    Path dir;

    private HostBackend b;
    private RemoteFiles files;
    private ServerSocketChannel socket;

    @BeforeEach
    void open() {
        b = new HostBackend(HostBackend.settings(dir.resolve("private")), StdinMode.PAYLOAD, false, List.of());
        files = b.env.files();
    }

    @AfterEach
    void close() throws IOException {
        if (socket != null) {
            socket.close();
        }
        HostBackend.closeAll(List.of(b));
    }

    /** A special entry, and the words the refusal must name it by. */
    enum Special {
        FIFO("a FIFO"), SOCKET("a socket"), CHARACTER_DEVICE("a character device");

        final String kind;

        Special(String kind) {
            this.kind = kind;
        }
    }

    private Path make(Special s, Path p) throws Exception {
        switch (s) {
            case FIFO -> run("mkfifo", p.toString());
            case SOCKET -> {
                socket = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                socket.bind(UnixDomainSocketAddress.of(p));
            }
            case CHARACTER_DEVICE -> Assumptions.assumeTrue(run("mknod", p.toString(), "c", "1", "3") == 0,
                    "mknod of a character device needs root with CAP_MKNOD, which this run lacks");
            default -> throw new AssertionError(s);
        }
        return p;
    }

    private static int run(String... argv) throws Exception {
        return new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
    }

    private static int typeBits(Path p) throws IOException {
        return ((Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS)) & 0170000;
    }

    private List<Path> temps() throws IOException {
        try (var s = Files.walk(dir.resolve("d"))) {
            return s.filter(p -> p.getFileName().toString().startsWith(".airlock-write-")).toList();
        }
    }

    private void refused(DeniedException e, String operation, Path shown, Special s) {
        String m = e.getMessage();
        assertTrue(m.startsWith(operation + " " + shown + " refused: it is " + s.kind + ","), m);
        assertFalse(m.contains("\n"), "one line: " + m);
        assertTrue(m.contains("name a regular file"), "says what to do: " + m);
    }

    @ParameterizedTest
    @EnumSource(Special.class)
    void aWriteNeverReplacesTheEntryNorWritesThroughALinkToIt(Special s) throws Exception {
        Path d = Files.createDirectories(dir.resolve("d"));
        Path entry = make(s, d.resolve("entry"));
        int bits = typeBits(entry);
        DeniedException e = assertThrows(DeniedException.class, () -> files.write(entry.toString(), "X".getBytes(StandardCharsets.UTF_8)));
        refused(e, "write to", entry, s);
        Path link = Files.createSymbolicLink(d.resolve("link"), entry.getFileName());
        e = assertThrows(DeniedException.class, () -> files.write(link.toString(), "X".getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains("refused: it is " + s.kind + ","), e.getMessage());
        assertEquals(bits, typeBits(entry), "the entry was replaced");
        assertTrue(Files.isSymbolicLink(link), "the link was replaced");
        assertEquals(List.of(), temps(), "a refused write left its temp file");
    }

    @ParameterizedTest
    @EnumSource(Special.class)
    void aDeleteNeverRemovesTheEntryALinkToItOrATreeHoldingIt(Special s) throws Exception {
        Path d = Files.createDirectories(dir.resolve("d/tree/deep"));
        Path entry = make(s, d.resolve("entry"));
        int bits = typeBits(entry);
        refused(assertThrows(DeniedException.class, () -> files.delete(entry.toString())), "delete", entry, s);
        Path link = Files.createSymbolicLink(dir.resolve("d/link"), entry);
        refused(assertThrows(DeniedException.class, () -> files.delete(link.toString())), "delete", link, s);
        Path tree = dir.resolve("d/tree");
        refused(assertThrows(DeniedException.class, () -> files.delete(tree.toString())), "delete", entry, s);
        assertEquals(bits, typeBits(entry), "the entry was removed");
        assertTrue(Files.isSymbolicLink(link), "the link was removed");
    }

    /** The ordinary cases the rule must leave alone, each as before. */
    @Test
    void ordinaryFilesLinksAndTreesAreWrittenAndDeletedAsBefore() throws Exception {
        Path d = Files.createDirectories(dir.resolve("d"));
        Path fifo = make(Special.FIFO, dir.resolve("fifo-outside"));
        Path f = d.resolve("new.txt");
        files.write(f.toString(), "one".getBytes(StandardCharsets.UTF_8));
        files.write(f.toString(), "two".getBytes(StandardCharsets.UTF_8));
        assertEquals("two", Files.readString(f));
        Path link = Files.createSymbolicLink(d.resolve("link.txt"), f.getFileName());
        files.write(link.toString(), "three".getBytes(StandardCharsets.UTF_8));
        assertTrue(Files.isSymbolicLink(link), "the link stays");
        assertEquals("three", Files.readString(f));
        assertTrue(files.delete(link.toString()), "a link to a regular file is deleted");
        assertFalse(Files.exists(link, LinkOption.NOFOLLOW_LINKS));
        assertTrue(Files.exists(f), "and its target stays");
        Path tree = Files.createDirectories(d.resolve("tree/sub"));
        Files.writeString(tree.resolve("a.txt"), "a");
        Files.createSymbolicLink(tree.resolve("to-fifo"), fifo); // a link in a tree is removed, never followed
        assertTrue(files.delete(d.resolve("tree").toString()));
        assertFalse(Files.exists(d.resolve("tree"), LinkOption.NOFOLLOW_LINKS));
        assertEquals(0010000, typeBits(fifo), "the FIFO a link in the tree led to stays");
        assertTrue(files.delete(f.toString()));
        assertFalse(files.delete(f.toString()), "gone");
        assertEquals(List.of(), temps());
    }
}
