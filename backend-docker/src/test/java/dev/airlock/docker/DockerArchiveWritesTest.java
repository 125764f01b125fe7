package dev.airlock.docker;

import dev.airlock.AirlockException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.WriteOptions;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Writes with {@code airlock.docker.files=archive}: through the archive API where the daemon
 * writes what commands see, the shell path where it would not (a tmpfs, a read-only root, a symlink): the bytes, mode and owner commands find,
 * and the same refusals on both routes. Which route a write took is read from the environment's
 * count of archive writes.
 */
@ExtendWith(DockerFixture.class)
class DockerArchiveWritesTest {
    private static final List<Environment> OPEN = new ArrayList<>();
    private static Environment archive;
    private static Environment shell;
    private static Environment user;
    private static Environment mounts;
    private static Path volume;

    private static synchronized Environment open(Settings s) {
        Environment e = new DockerProvider().open(OpenContext.of(s));
        OPEN.add(e);
        return e;
    }

    /** Archive writes where they land where commands look. */
    private static synchronized Environment archive() {
        if (archive == null) {
            archive = open(DockerFixture.settings(DockerSettings.FILES, "archive"));
        }
        return archive;
    }

    /** The same container settings, every write through the shell path (the default). */
    private static synchronized Environment shell() {
        if (shell == null) {
            shell = open(DockerFixture.settings());
        }
        return shell;
    }

    /** A tmpfs on a writable root and a bind mount from this host. */
    private static synchronized Environment mounts() throws Exception {
        if (mounts == null) {
            volume = Files.createTempDirectory("airlock-archive-");
            Files.setPosixFilePermissions(volume, PosixFilePermissions.fromString("rwxrwxrwx"));
            mounts = open(DockerFixture.settings(DockerSettings.FILES, "archive", DockerHardening.TMPFS, "/scratch:mode=1777",
                    DockerSettings.VOLUMES, volume + ":/data"));
        }
        return mounts;
    }

    /** An exec user other than root. */
    private static synchronized Environment user() {
        if (user == null) {
            user = open(DockerFixture.settings(DockerSettings.FILES, "archive", DockerSettings.USER, "1000:1000", DockerSettings.ENV + ".HOME", "/tmp"));
        }
        return user;
    }

    @AfterAll
    static void close() throws Exception {
        OPEN.forEach(Environment::close);
        if (volume != null) {
            try (var s = Files.walk(volume)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static ExecResult sh(Environment env, String script) {
        ExecResult r = env.exec(ExecRequest.builder(script).build());
        assertEquals(0, r.exitCode(), script + ": " + r.stderr().text());
        return r;
    }

    /** The bytes a command in the container reads at {@code path}. */
    private static byte[] seenByCommands(Environment env, String path) {
        return sh(env, "cat -- '" + path + "'").stdout().bytes();
    }

    /** Runs {@code write} and returns how many archive writes it made. */
    private static long archiveWritesOf(Environment env, Runnable write) {
        long before = DockerBackend.of(env).archiveWrites();
        write.run();
        return DockerBackend.of(env).archiveWrites() - before;
    }

    @Test
    void emptyNulInvalidUtf8AndSeveralMiBAreByteExactThroughTheArchive() {
        Environment env = archive();
        byte[] odd = {0, (byte) 0xff, (byte) 0xfe, 'a', 0, (byte) 0xc3, '(', '\n', (byte) 0x80};
        byte[] big = new byte[(6 << 20) + 123];
        new Random(7).nextBytes(big);
        for (int i = 0; i < big.length; i += 4096) {
            big[i] = 0;
        }
        sh(env, "mkdir -p /work && echo old > /work/empty");
        assertEquals(1, archiveWritesOf(env, () -> env.files().write("/work/empty", new byte[0])));
        assertEquals(1, archiveWritesOf(env, () -> env.files().write("/work/odd", odd)));
        // A stream of declared length, as a caller would pass a file it reads: never held whole.
        assertEquals(1, archiveWritesOf(env, () -> env.files().write("/work/big",
                Payload.ofStream(new ByteArrayInputStream(big), big.length), WriteOptions.defaults())));
        assertArrayEquals(new byte[0], seenByCommands(env, "/work/empty"));
        assertArrayEquals(odd, seenByCommands(env, "/work/odd"));
        assertArrayEquals(big, seenByCommands(env, "/work/big"));
        assertEquals("", sh(env, "ls -a /work | grep airlock-write || true").stdout().text(), "no temp file is left");
    }

    @Test
    void aStreamShorterThanDeclaredFailsAndLeavesTheOldFile() {
        Environment env = archive();
        sh(env, "mkdir -p /work && printf old > /work/short");
        AirlockException e = assertThrows(AirlockException.class, () -> env.files().write("/work/short",
                Payload.ofStream(new ByteArrayInputStream(new byte[10]), 20), WriteOptions.defaults()));
        assertEquals(true, e.getMessage().contains("ended after 10"), e.getMessage());
        assertEquals("old", new String(seenByCommands(env, "/work/short"), StandardCharsets.UTF_8));
        assertEquals("", sh(env, "ls -a /work | grep airlock-write || true").stdout().text(), "no temp file is left");
    }

    /** A file that grew after {@code Payload.ofFile} measured it: the write fails, nothing is cut short and landed. */
    @Test
    void aFileLongerThanItDeclaredFailsAndLeavesTheOldFile(@TempDir Path local) throws Exception {
        Environment env = archive();
        Path file = local.resolve("grows.bin");
        Files.write(file, new byte[10]);
        Payload declared = Payload.ofFile(file); // 10 bytes, read when delivered
        Files.write(file, new byte[30]);
        sh(env, "mkdir -p /work && printf old > /work/long");
        AirlockException e = assertThrows(AirlockException.class,
                () -> env.files().write("/work/long", declared, WriteOptions.defaults()));
        assertEquals(true, e.getMessage().contains("longer than the 10 bytes"), e.getMessage());
        assertEquals("old", new String(seenByCommands(env, "/work/long"), StandardCharsets.UTF_8));
        assertEquals("", sh(env, "ls -a /work | grep airlock-write || true").stdout().text(), "no temp file is left");
    }

    @Test
    void aWriteUnderATmpfsOnAWritableRootIsSeenByCommands() throws Exception {
        Environment env = mounts();
        byte[] data = "under the tmpfs\n".getBytes(StandardCharsets.UTF_8);
        assertEquals(0, archiveWritesOf(env, () -> env.files().write("/scratch/f", data)), "a tmpfs takes the shell path");
        assertArrayEquals(data, seenByCommands(env, "/scratch/f"));
        // The daemon's own bind mount is written through the archive, and seen on both sides.
        assertEquals(1, archiveWritesOf(env, () -> env.files().write("/data/f", data)));
        assertArrayEquals(data, seenByCommands(env, "/data/f"));
        assertArrayEquals(data, Files.readAllBytes(volume.resolve("f")));
    }

    @Test
    void aWriteUnderTheTmpOfAReadOnlyContainerIsSeenByCommands() {
        Environment env = open(DockerFixture.settings(DockerSettings.FILES, "archive", DockerHardening.READ_ONLY, "true", DockerHardening.TMPFS, "/tmp:mode=1777,/root"));
        byte[] data = {1, 0, 2, (byte) 0xff};
        assertEquals(0, archiveWritesOf(env, () -> env.files().write("/tmp/f", data)));
        assertArrayEquals(data, seenByCommands(env, "/tmp/f"));
    }

    /**
     * An exec user other than root takes the shell path everywhere: the daemon writes as root and
     * follows a link planted at the entry's name in a directory that user writes to. The file is
     * still the user's, with its mode kept or set.
     */
    @Test
    void anExecUserOtherThanRootTakesTheShellPathAndOwnsTheFile() throws Exception {
        Environment env = user();
        assertEquals(0, archiveWritesOf(env, () -> env.files().write("/tmp/new", new byte[] {1})));
        assertEquals("1000:1000 644", sh(env, "stat -c '%u:%g %a' /tmp/new").stdout().text().trim());
        sh(env, "printf x > /tmp/kept && chmod 750 /tmp/kept");
        assertEquals(0, archiveWritesOf(env, () -> env.files().write("/tmp/kept", new byte[] {2})));
        assertEquals("1000:1000 750", sh(env, "stat -c '%u:%g %a' /tmp/kept").stdout().text().trim());
        assertEquals(0, archiveWritesOf(env, () -> env.files().write("/tmp/set", Payload.of(new byte[] {3}), WriteOptions.mode(0600))));
        assertEquals("1000:1000 600", sh(env, "stat -c '%u:%g %a' /tmp/set").stdout().text().trim());
        assertEquals(0, archiveWritesOf(env, () -> env.files().write("/tmp/made/f", new byte[] {4})));
        assertArrayEquals(new byte[] {4}, seenByCommands(env, "/tmp/made/f"));
    }

    /** Root's writes through the archive keep the mode rules of the shell write. */
    @Test
    void rootsArchiveWritesKeepOrSetTheMode() throws Exception {
        Environment env = archive();
        assertEquals(1, archiveWritesOf(env, () -> env.files().write("/work/new", new byte[] {1})));
        assertEquals("0:0 644", sh(env, "stat -c '%u:%g %a' /work/new").stdout().text().trim());
        sh(env, "printf x > /work/kept && chmod 750 /work/kept");
        assertEquals(1, archiveWritesOf(env, () -> env.files().write("/work/kept", new byte[] {2})));
        assertEquals("0:0 750", sh(env, "stat -c '%u:%g %a' /work/kept").stdout().text().trim());
        assertEquals(1, archiveWritesOf(env, () -> env.files().write("/work/set", Payload.of(new byte[] {3}), WriteOptions.mode(0600))));
        assertEquals("0:0 600", sh(env, "stat -c '%u:%g %a' /work/set").stdout().text().trim());
    }

    @Test
    void parentsAreMadeWhenAskedAndOnlyThen() {
        Environment env = archive();
        assertEquals(1, archiveWritesOf(env, () -> env.files().write("/work/a/b/c", new byte[] {4})));
        assertArrayEquals(new byte[] {4}, seenByCommands(env, "/work/a/b/c"));
        assertThrows(dev.airlock.NoSuchPathException.class, () -> env.files().write("/work/x/y", Payload.of(new byte[] {5}),
                WriteOptions.defaults().withCreateParents(false)));
        assertEquals("gone", sh(env, "[ -e /work/x ] || echo gone").stdout().text().trim(), "no /work/x made");
    }

    /**
     * The daemon answers 404 for a missing directory as for a missing container: a directory a
     * command removed between the write's place script and the upload is a failed write (not
     * found), and only a container that is gone is a lost container.
     */
    @Test
    void anUploadIntoAVanishedDirectoryIsNotFoundAndOnlyAGoneContainerIsLost() throws Exception {
        Environment env = open(DockerFixture.settings());
        DockerSettings s = DockerSettings.from(DockerFixture.settings(), java.util.Map.of());
        try (DockerDaemon daemon = new DockerDaemon(s)) {
            sh(env, "mkdir -p /work/gone && rmdir /work/gone");
            dev.airlock.NoSuchPathException e = assertThrows(dev.airlock.NoSuchPathException.class,
                    () -> daemon.putArchive(DockerBackend.of(env).containerId(), "/work/gone", oneByteArchive()));
            assertEquals("/work/gone", e.path());
            String id = DockerBackend.of(env).containerId();
            env.close();
            assertThrows(dev.airlock.BackendUnavailableException.class, () -> daemon.putArchive(id, "/work", oneByteArchive()));
        }
    }

    private static java.io.InputStream oneByteArchive() {
        return new TarEntryStream("f", 0644, 0, 0, 1, 0, new ByteArrayInputStream(new byte[] {1}));
    }

    @Test
    void aSymlinkedTargetIsWrittenThroughAndTheLinkStays() {
        Environment env = archive();
        sh(env, "mkdir -p /work/l && printf old > /work/l/real && ln -sf /work/l/real /work/l/link");
        assertEquals(0, archiveWritesOf(env, () -> env.files().write("/work/l/link", "new".getBytes(StandardCharsets.UTF_8))),
                "a symlink takes the shell path, which judges where it lands");
        assertEquals("new", new String(seenByCommands(env, "/work/l/real"), StandardCharsets.UTF_8));
        assertEquals("/work/l/real", sh(env, "readlink /work/l/link").stdout().text().trim());
    }

    @Test
    void protectedPathsAndLinksToThemAreRefusedAlikeOnBothRoutes() {
        String setup = "mkdir -p /root/.ssh /work/p /work/dir && printf keep > /root/.ssh/authorized_keys"
                + " && ln -sf /root/.ssh/authorized_keys /work/p/innocent";
        sh(archive(), setup);
        sh(shell(), setup);
        for (String path : List.of("/root/.ssh/authorized_keys", "/work/p/innocent")) {
            Supplier<String> onArchive = () -> refusal(archive(), path);
            assertEquals(refusal(shell(), path), onArchive.get(), path);
            assertEquals("keep", new String(seenByCommands(archive(), "/root/.ssh/authorized_keys"), StandardCharsets.UTF_8));
            assertEquals("/root/.ssh/authorized_keys", sh(archive(), "readlink /work/p/innocent").stdout().text().trim());
        }
        assertEquals(refusal(shell(), "/work/dir"), refusal(archive(), "/work/dir"), "a directory target");
    }

    /** The refusal's type and message (the environment's id taken out). */
    private static String refusal(Environment env, String path) {
        RuntimeException e = assertThrows(RuntimeException.class, () -> env.files().write(path, new byte[] {9}));
        return e.getClass().getSimpleName() + ": " + e.getMessage().replace(env.id(), "ID");
    }
}
