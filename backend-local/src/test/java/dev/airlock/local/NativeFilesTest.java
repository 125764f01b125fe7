package dev.airlock.local;

import dev.airlock.DeniedException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.WriteOptions;
import dev.airlock.event.ExecTransition;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** files().write on the local backend runs no process, and keeps the shell implementation's rules. */
class NativeFilesTest {

    private static Settings settings(Path airlockHome) {
        // Native files exist only without a sandbox: under bubblewrap writes go through commands.
        return Settings.of("airlock.container", "no", "airlock.home-mode", "profile", "airlock.home", airlockHome.toString(),
                "airlock.local.isolation", "none");
    }

    @Test
    void aWriteStartsNoCommandAndKeepsAnExistingMode(@TempDir Path airlockHome, @TempDir Path dir) throws Exception {
        List<ExecTransition> transitions = new CopyOnWriteArrayList<>();
        Path f = dir.resolve("sub/file.txt");
        byte[] one = "one\n".getBytes(StandardCharsets.UTF_8);
        byte[] two = "two, longer\n".getBytes(StandardCharsets.UTF_8);
        try (Environment env = Environments.builder().settings(settings(airlockHome)).onTransition(transitions::add).open()) {
            env.files().write(f.toString(), dev.airlock.Payload.of(one), WriteOptions.mode(0640));
            assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
            env.files().write(f.toString(), two);
            assertArrayEquals(two, Files.readAllBytes(f));
            assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)), "the mode is kept");
        }
        assertEquals(List.of(), transitions, "no command ran for the writes");
        try (var left = Files.list(f.getParent())) {
            assertEquals(List.of(f), left.toList(), "no temp file left");
        }
    }

    @Test
    void aFilePayloadArrivesByteExactAndAFileThatGrewFailsTheWrite(@TempDir Path airlockHome, @TempDir Path dir) throws Exception {
        byte[] data = new byte[3 * 1024 * 1024 + 17]; // several of the stream copy's buffers, and an odd tail
        new java.util.Random(42).nextBytes(data);
        for (int i = 0; i < 256; i++) {
            data[i] = (byte) i;
        }
        Path src = Files.write(dir.resolve("src.bin"), data);
        Path dst = dir.resolve("dst.bin");
        Path grown = dir.resolve("grown.bin");
        try (Environment env = Environments.open(settings(airlockHome))) {
            env.files().write(dst.toString(), dev.airlock.Payload.ofFile(src));
            assertArrayEquals(data, Files.readAllBytes(dst));
            dev.airlock.Payload payload = dev.airlock.Payload.ofFile(src); // its length is taken now
            Files.write(src, new byte[] {1, 2, 3}, java.nio.file.StandardOpenOption.APPEND);
            dev.airlock.BackendException e = assertThrows(dev.airlock.BackendException.class,
                    () -> env.files().write(grown.toString(), payload));
            assertTrue(e.getMessage().contains("wrote " + (data.length + 3) + " of " + data.length + " bytes"), e.getMessage());
        }
        assertFalse(Files.exists(grown), "a failed write leaves no file");
    }

    @Test
    void aWriteThroughASymlinkLandsInItsTargetAndTheLinkStays(@TempDir Path airlockHome, @TempDir Path dir) throws Exception {
        Path target = Files.createDirectories(dir.resolve("real")).resolve("target.txt");
        Files.writeString(target, "old\n");
        Path link = Files.createSymbolicLink(dir.resolve("link.txt"), Path.of("real/target.txt"));
        try (Environment env = Environments.open(settings(airlockHome))) {
            env.files().write(link.toString(), "new\n".getBytes(StandardCharsets.UTF_8));
        }
        assertTrue(Files.isSymbolicLink(link), "the link stays");
        assertEquals("new\n", Files.readString(target));
    }

    @Test
    void aSymlinkIsJudgedAtItsPhysicalPlace(@TempDir Path airlockHome, @TempDir Path dir) throws Exception {
        List<ApprovalChannel.ApprovalRequest> asked = new CopyOnWriteArrayList<>();
        try (Environment env = Environments.builder().settings(settings(airlockHome))
                .approvalChannel((request, timeout) -> {
                    asked.add(request);
                    return ApprovalChannel.Decision.DENY;
                }).open()) {
            Path config = Path.of(env.target().home(), ".ssh/config");
            Files.createDirectories(config.getParent());
            Path link = Files.createSymbolicLink(dir.resolve("innocent"), config);
            assertThrows(DeniedException.class, () -> env.files().write(link.toString(), "Host x\n".getBytes(StandardCharsets.UTF_8)));
            assertFalse(Files.exists(config), "nothing written through the link");
            assertTrue(asked.stream().anyMatch(r -> r.path().endsWith("/.ssh/config")), asked.toString());
        }
    }
}
