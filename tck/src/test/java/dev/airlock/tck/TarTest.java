package dev.airlock.tck;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The kit's tar against the system's {@code tar}, both ways. */
class TarTest {

    @Test
    void systemTarExtractsWhatTheKitWrites(@TempDir Path dir) throws Exception {
        byte[] key = {0, 1, 0, (byte) 0xff};
        byte[] archive = Tar.write(List.of(Tar.Entry.dir("a", 0750), Tar.Entry.file("a/key", 0600, key),
                Tar.Entry.file("name with space", 0644, "x".getBytes(StandardCharsets.UTF_8))));
        Path tarFile = dir.resolve("in.tar");
        Files.write(tarFile, archive);
        Path out = Files.createDirectory(dir.resolve("out"));
        run(out, "tar", "-xpf", tarFile.toString());
        assertArrayEquals(key, Files.readAllBytes(out.resolve("a/key")));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out.resolve("a/key"))));
        assertEquals("rwxr-x---", PosixFilePermissions.toString(Files.getPosixFilePermissions(out.resolve("a"))));
        assertEquals("x", Files.readString(out.resolve("name with space")));
    }

    @Test
    void theKitReadsWhatSystemTarWrites(@TempDir Path dir) throws Exception {
        Path src = Files.createDirectory(dir.resolve("src"));
        Files.createDirectories(src.resolve("d/" + "long-".repeat(30)));
        Path deep = src.resolve("d/" + "long-".repeat(30) + "/file");
        Files.write(deep, new byte[] {1, 2, 3});
        Files.setPosixFilePermissions(deep, PosixFilePermissions.fromString("rwxr-x--x"));
        Path tarFile = dir.resolve("out.tar");
        run(src, "tar", "-cf", tarFile.toString(), ".");
        Map<String, Tar.Entry> byPath = new TreeMap<>();
        try (InputStream in = Files.newInputStream(tarFile)) {
            Tar.read(in).forEach(e -> byPath.put(e.path(), e));
        }
        Tar.Entry file = byPath.get("d/" + "long-".repeat(30) + "/file");
        assertTrue(file != null, "a path over 100 bytes must survive: " + byPath.keySet());
        assertEquals(0751, file.mode());
        assertArrayEquals(new byte[] {1, 2, 3}, file.content());
        assertTrue(byPath.get("d").isDirectory());
    }

    private static void run(Path cwd, String... argv) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(argv).directory(cwd.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "tar hung");
        assertEquals(0, p.exitValue(), String.join(" ", argv) + ": " + out);
    }
}
