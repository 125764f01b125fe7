package dev.airlock.local;

import dev.airlock.AirlockException;
import dev.airlock.Environment;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code files()} under bubblewrap, answered in this JVM where the sandbox's view allows
 * ({@link SandboxFiles}): what it reads and writes is what a command in the sandbox reads and
 * writes, at the same places, with the same refusals.
 */
class SandboxFilesTest {
    @TempDir
    Path dir;

    private Path work;

    @BeforeEach
    void sandbox() throws IOException {
        BubblewrapRequirement.require();
        work = Files.createDirectories(dir.resolve("work")).toRealPath();
    }

    private Environment open() {
        return new LocalProvider().open(OpenContext.of(Settings.of("airlock.container", "no",
                "airlock.local.isolation", "bwrap", "airlock.local.workdir", work.toString())));
    }

    private static byte[] awkward() {
        byte[] b = new byte[70_000];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i * 31 + (i >> 8)); // NULs, invalid UTF-8, every byte value
        }
        return b;
    }

    @Test
    void aWriteIsWhatACommandReadsAndACommandsFileIsWhatAReadGets() {
        byte[] bytes = awkward();
        try (Environment env = open()) {
            env.files().write("data.bin", Payload.of(bytes));
            ExecResult seen = env.exec("cat data.bin");
            assertArrayEquals(bytes, seen.stdout().bytes());
            env.exec("printf 'a\\000b\\377' > made.bin; : > empty");
            assertArrayEquals(new byte[]{'a', 0, 'b', (byte) 0xff}, env.files().readBytes(work.resolve("made.bin").toString()));
            assertArrayEquals(new byte[0], env.files().readBytes("empty"));
        }
    }

    @Test
    void tmpIsTheSandboxsOwnForAWriteAsForACommand() throws IOException {
        String name = "airlock-sandbox-files-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        try (Environment env = open()) {
            env.files().write("/tmp/" + name, Payload.of("inside".getBytes()));
            assertEquals("inside", env.exec("cat /tmp/" + name).stdout().text());
            assertFalse(Files.exists(Path.of("/tmp", name)), "the write reached the host's /tmp");
            env.exec("printf cmd > /tmp/" + name + ".2");
            assertEquals("cmd", new String(env.files().readBytes("/tmp/" + name + ".2")));
        }
    }

    @Test
    void aLinkOutOfTheWritableTreeDoesNotCarryAWriteOut() throws IOException {
        Path outside = Files.createDirectories(dir.resolve("outside")).toRealPath();
        Path target = Files.writeString(outside.resolve("f"), "kept");
        try (Environment env = open()) {
            Files.createSymbolicLink(work.resolve("out"), outside);
            Files.createSymbolicLink(work.resolve("file-link"), target);
            assertThrows(AirlockException.class, () -> env.files().write("out/f", Payload.of("changed".getBytes())));
            assertThrows(AirlockException.class, () -> env.files().write("out/new", Payload.of("new".getBytes())));
            assertThrows(AirlockException.class, () -> env.files().write("file-link", Payload.of("changed".getBytes())));
            ExecResult r = env.exec("echo changed > out/f");
            assertTrue(r.exitCode() != 0, "a command wrote outside too: the sandbox is not what this test assumes");
        }
        assertEquals("kept", Files.readString(target));
        assertFalse(Files.exists(outside.resolve("new")));
    }

    @Test
    void aReadGetsWhatTheSandboxShowsNotWhatTheHostHolds() {
        Services.require(Files.isRegularFile(Path.of("/etc/shadow")), "this machine has no /etc/shadow");
        try (Environment env = open()) {
            // A command finds the password hashes hidden (an empty file it may not even open); so does a read.
            ExecResult byCommand = env.exec("cat /etc/shadow");
            assertEquals("", byCommand.stdout().text());
            assertArrayEquals(new byte[0], readOrEmpty(env, "/etc/shadow"), "a read got the host's password hashes");
            assertEquals(env.exec("cat /etc/hostname 2>/dev/null || true").stdout().text(),
                    new String(readOrEmpty(env, "/etc/hostname")));
        }
    }

    private static byte[] readOrEmpty(Environment env, String path) {
        try {
            return env.files().readBytes(path);
        } catch (AirlockException | java.io.UncheckedIOException e) {
            return new byte[0]; // refused, as a command's cat is
        }
    }

    @Test
    void asRootAFileOfAnotherUserIsReadOnlyAsACommandCanReadIt() throws IOException {
        Services.require(Bubblewrap.runsAsRoot(), "a command run as root is confined to root's files only when this JVM is root");
        Path secret = Files.writeString(work.resolve("theirs"), "not for commands");
        Files.setPosixFilePermissions(secret, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Files.setAttribute(secret, "unix:uid", 12345);
        try (Environment env = open()) {
            ExecResult byCommand = env.exec("cat theirs");
            assertTrue(byCommand.exitCode() != 0, "a command read another user's 0600 file: " + byCommand.stdout().text());
            AirlockException e = assertThrows(AirlockException.class, () -> env.files().readBytes("theirs"));
            assertTrue(e.getMessage().contains("ermission denied"), e.getMessage());
        }
    }
}
