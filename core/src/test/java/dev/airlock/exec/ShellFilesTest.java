package dev.airlock.exec;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.DeniedException;
import dev.airlock.FileStat;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.StdinMode;
import dev.airlock.WriteOptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The file API of every backend without native files ({@link ShellFiles}: one internal exec per
 * operation, data through stdin and stdout), checked against the host's own view of the files it
 * touched: bytes, modes, types, names, what is left behind after a failure.
 */
class ShellFilesTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();

    private RemoteFiles files;

    @BeforeEach
    void open() {
        files = opened.add(new HostBackend(HostBackend.settings(dir.resolve("private")), StdinMode.PAYLOAD, false,
                List.of())).env.files();
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        if (n > 1) {
            b[0] = 0;
            b[n - 1] = (byte) 0xff;
        }
        return b;
    }

    private static byte[] readAll(InputStream in) throws IOException {
        try (in) {
            return in.readAllBytes();
        }
    }

    /** What was left in {@code d}: nothing of a write's temp files. */
    private static List<String> names(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aWriteLandsByteExactWithItsModeAndReadsBack() throws IOException {
        byte[] data = bytes(70_000, 1);
        Path f = dir.resolve("out.bin");
        files.write(f.toString(), Payload.of(data), WriteOptions.mode(0640));
        assertArrayEquals(data, Files.readAllBytes(f));
        assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        assertArrayEquals(data, readAll(files.read(f.toString())));
        assertEquals(List.of("out.bin", "private"), names(dir), "a write leaves no temp file beside its target");
    }

    @Test
    void anEmptyWriteAndAStreamOfUnknownLengthLandExactly() throws IOException {
        Path empty = dir.resolve("empty");
        files.write(empty.toString(), Payload.of(new byte[0]));
        assertEquals(0, Files.size(empty));
        byte[] data = bytes((1 << 20) + 3, 2); // over the one-run size: the two-run write, counted as it is sent
        Path streamed = dir.resolve("streamed");
        files.write(streamed.toString(), Payload.ofStream(new ByteArrayInputStream(data)));
        assertArrayEquals(data, Files.readAllBytes(streamed));
    }

    @Test
    void aWriteReplacesAFileAndNeverFollowsASymlinkAtTheTarget() throws IOException {
        Path real = Files.writeString(dir.resolve("real"), "real");
        Path link = Files.createSymbolicLink(dir.resolve("link"), real);
        files.write(link.toString(), Payload.ofUtf8("through the link"));
        // The link's target is written (the resolved path, judged by the guard), and the link stays a link.
        assertEquals("through the link", Files.readString(real));
        assertTrue(Files.isSymbolicLink(link));
        files.write(real.toString(), Payload.ofUtf8("again"));
        assertEquals("again", Files.readString(real));
    }

    @Test
    void aWriteThroughASymlinkedParentLandsInItsPhysicalPlace() throws IOException {
        Path physical = Files.createDirectory(dir.resolve("physical"));
        Path linked = Files.createSymbolicLink(dir.resolve("linked"), physical);
        files.write(linked.resolve("f").toString(), Payload.ofUtf8("two runs"));
        assertEquals("two runs", Files.readString(physical.resolve("f")));
        assertEquals(List.of("f"), names(physical));
    }

    @Test
    void aWriteWithoutParentsIsNoSuchPathAndWithParentsMakesThem() throws IOException {
        Path deep = dir.resolve("a/b/c/f");
        NoSuchPathException e = assertThrows(NoSuchPathException.class,
                () -> files.write(deep.toString(), Payload.ofUtf8("x"), WriteOptions.defaults().withCreateParents(false)));
        assertTrue(e.getMessage().contains(dir.resolve("a/b/c").toString()), e.getMessage());
        assertFalse(Files.exists(dir.resolve("a")));
        files.write(deep.toString(), Payload.ofUtf8("x"), WriteOptions.defaults().withCreateParents(true));
        assertEquals("x", Files.readString(deep));
        Path viaLink = Files.createSymbolicLink(dir.resolve("to-a"), dir.resolve("a")).resolve("n/m/g");
        files.write(viaLink.toString(), Payload.ofUtf8("y"), WriteOptions.defaults().withCreateParents(true));
        assertEquals("y", Files.readString(dir.resolve("a/n/m/g")));
    }

    @Test
    void aWriteOntoADirectoryFailsAndRemovesTheDirectoriesItMade() throws IOException {
        Path target = Files.createDirectories(dir.resolve("made/here/target"));
        assertThrows(AirlockException.class, () -> files.write(target.toString(), Payload.ofUtf8("x")));
        assertTrue(Files.isDirectory(target), "the directory stays");
        Path d = Files.createDirectories(dir.resolve("x"));
        Files.createDirectories(dir.resolve("x/new/deeper/f")); // a directory where the file would go
        assertThrows(AirlockException.class, () -> files.write(d.resolve("new/deeper/f").toString(), Payload.ofUtf8("x"),
                WriteOptions.defaults().withCreateParents(true)));
        assertEquals(List.of("new"), names(d), "an existing parent is kept");
    }

    @Test
    void badPathsAreRefusedInOneLineBeforeAnyRun() {
        for (String bad : new String[] {"", "a\0b"}) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> files.write(bad, Payload.ofUtf8("x")));
            assertFalse(e.getMessage().contains("\n"));
        }
        assertThrows(ConfigurationException.class, () -> files.read(null));
        String longName = dir + "/" + "n".repeat(256);
        ConfigurationException name = assertThrows(ConfigurationException.class, () -> files.write(longName, Payload.ofUtf8("x")));
        assertTrue(name.getMessage().contains("longer than 255 bytes"), name.getMessage());
        assertFalse(name.getMessage().contains("\n"));
        String longPath = dir + "/" + ("d".repeat(200) + "/").repeat(21) + "f";
        ConfigurationException path = assertThrows(ConfigurationException.class, () -> files.write(longPath, Payload.ofUtf8("x")));
        assertTrue(path.getMessage().contains("at most 4095"), path.getMessage());
        String exact = dir + "/" + "e".repeat(255);
        files.write(exact, Payload.ofUtf8("255"));
        assertTrue(Files.exists(Path.of(exact)), "a 255-byte name is a valid name");
    }

    @Test
    void readsOfWhatIsNoFileFailAsSuch() throws IOException {
        NoSuchPathException missing = assertThrows(NoSuchPathException.class, () -> readAll(files.read(dir + "/nope")));
        assertTrue(missing.getMessage().contains(dir + "/nope"), missing.getMessage());
        AirlockException isDir = assertThrows(AirlockException.class, () -> readAll(files.read(dir.toString())));
        assertTrue(isDir.getMessage().contains("is a directory"), isDir.getMessage());
    }

    @Test
    void statReportsTypeSizeModeAndTimeAndEmptyForNothing() throws Exception {
        Path f = Files.write(dir.resolve("f"), bytes(1234, 3));
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rwxr-x--x"));
        Files.setLastModifiedTime(f, FileTime.from(Instant.ofEpochSecond(1_600_000_000L)));
        FileStat s = files.stat(f.toString()).orElseThrow();
        assertEquals(FileStat.Type.FILE, s.type());
        assertEquals(1234, s.size());
        assertEquals(0751, s.mode());
        assertEquals(Instant.ofEpochSecond(1_600_000_000L), s.mtime());
        assertEquals("f", s.name());
        assertEquals(f.toString(), s.path());
        assertEquals(FileStat.Type.DIRECTORY, files.stat(dir + "/").orElseThrow().type());
        assertEquals(dir.getFileName().toString(), files.stat(dir + "/").orElseThrow().name());
        Path dangling = Files.createSymbolicLink(dir.resolve("dangling"), dir.resolve("gone"));
        assertEquals(FileStat.Type.SYMLINK, files.stat(dangling.toString()).orElseThrow().type());
        assertTrue(files.stat(dir + "/nothing").isEmpty());
        Path fifo = dir.resolve("fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        assertEquals(FileStat.Type.OTHER, files.stat(fifo.toString()).orElseThrow().type());
    }

    @Test
    void listNamesEveryEntryWithItsStatSortedWhateverItsName() throws IOException {
        Path d = Files.createDirectory(dir.resolve("d"));
        List<String> odd = List.of(".hidden", "..dots", "-dash", "new\nline", "sp ace", "z");
        for (String n : odd) {
            Files.write(d.resolve(n), n.getBytes(StandardCharsets.UTF_8));
        }
        Files.createDirectory(d.resolve("sub"));
        List<FileStat> got = files.list(d.toString());
        assertEquals(Stream.concat(odd.stream(), Stream.of("sub")).sorted().toList(), got.stream().map(FileStat::name).toList());
        for (FileStat s : got) {
            assertEquals(d + "/" + s.name(), s.path());
            assertEquals(s.name().equals("sub") ? FileStat.Type.DIRECTORY : FileStat.Type.FILE, s.type());
            if (!s.name().equals("sub")) {
                assertEquals(s.name().getBytes(StandardCharsets.UTF_8).length, s.size(), s.name());
            }
        }
        assertEquals(List.of(), files.list(Files.createDirectory(dir.resolve("empty")) + "/"));
        assertThrows(NoSuchPathException.class, () -> files.list(dir + "/missing"));
        AirlockException notDir = assertThrows(AirlockException.class, () -> files.list(d.resolve("z").toString()));
        assertTrue(notDir.getMessage().contains("not a directory"), notDir.getMessage());
    }

    @Test
    void deleteRemovesFilesTreesAndLinksButNeverTheRoot() throws IOException {
        Path tree = Files.createDirectories(dir.resolve("tree/a/b"));
        Files.writeString(tree.resolve("f"), "x");
        Path target = Files.writeString(dir.resolve("kept"), "kept");
        Path link = Files.createSymbolicLink(dir.resolve("link"), target);
        assertTrue(files.delete(link.toString()));
        assertFalse(Files.exists(link, LinkOption.NOFOLLOW_LINKS));
        assertEquals("kept", Files.readString(target), "deleting a link leaves its target");
        assertTrue(files.delete(dir.resolve("tree").toString()));
        assertFalse(Files.exists(dir.resolve("tree")));
        assertFalse(files.delete(dir.resolve("tree").toString()), "nothing there: false");
        DeniedException root = assertThrows(DeniedException.class, () -> files.delete("/"));
        assertTrue(root.getMessage().contains("'/'"), root.getMessage());
    }

    @Test
    void mkdirsMakesEveryLevelAndFailsOnAFileInTheWay() throws IOException {
        files.mkdirs(dir + "/m/n/o");
        assertTrue(Files.isDirectory(dir.resolve("m/n/o")));
        files.mkdirs(dir + "/m/n/o"); // again: nothing to do
        Files.writeString(dir.resolve("file"), "x");
        assertThrows(AirlockException.class, () -> files.mkdirs(dir + "/file/sub"));
    }

    @Test
    void aTreeCopiedOutAndInAgainKeepsBytesAndModes() throws IOException {
        Path src = dir.resolve("src");
        Files.createDirectories(src.resolve("inner"));
        byte[] data = bytes(5000, 4);
        Files.write(src.resolve("inner/data"), data);
        Files.setPosixFilePermissions(src.resolve("inner/data"), PosixFilePermissions.fromString("rwx------"));
        byte[] tar = readAll(files.copyOut(dir.resolve("src").toString()));
        assertTrue(tar.length >= 1024, "a tar archive: " + tar.length + " bytes");
        files.copyIn(dir + "/dst/deep", new ByteArrayInputStream(tar));
        assertArrayEquals(data, Files.readAllBytes(dir.resolve("dst/deep/inner/data")));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("dst/deep/inner/data"))));
        assertThrows(NoSuchPathException.class, () -> readAll(files.copyOut(dir + "/missing")));
        AirlockException notDir = assertThrows(AirlockException.class, () -> readAll(files.copyOut(src.resolve("inner/data").toString())));
        assertTrue(notDir.getMessage().contains("not a directory"), notDir.getMessage());
        assertThrows(AirlockException.class, () -> files.copyIn(dir + "/bad", new ByteArrayInputStream(bytes(3000, 5))),
                "bytes that are no tar archive must fail the copy");
    }
}
