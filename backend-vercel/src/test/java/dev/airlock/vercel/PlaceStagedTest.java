package dev.airlock.vercel;

import dev.airlock.WriteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one command of a staged Vercel write ({@link VercelFiles#placeStaged}) run by this host's
 * {@code sh} on a directory of the test's own: it places the upload over the target with its mode,
 * and on any failure before the rename leaves nothing behind: not the upload, not a temp file, not
 * a directory it made.
 */
class PlaceStagedTest {
    @TempDir
    Path dir;

    private int run(String script) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("sh", "-c", script).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the script did not end");
        return p.exitValue();
    }

    private static long entries(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return s.count();
        }
    }

    @Test
    void theUploadLandsOverTheTargetWithItsModeAndNothingIsLeft() throws Exception {
        byte[] bytes = {0, (byte) 0xff, 'a', '\n', 0};
        Path staged = Files.write(dir.resolve("staged"), bytes);
        Path target = Files.writeString(dir.resolve("target"), "old");
        assertEquals(0, run(VercelFiles.placeStaged(target.toString(), staged.toString(), bytes.length, WriteOptions.mode(0640))));
        assertArrayEquals(bytes, Files.readAllBytes(target));
        assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(target)));
        assertFalse(Files.exists(staged), "the upload was left in the staging dir");
        assertEquals(1, entries(dir), "a temp file was left beside the target");
    }

    @Test
    void aFailedPlaceRemovesTheDirectoriesItMadeAndTheUpload() throws Exception {
        Path root = Files.createDirectories(dir.resolve("root"));
        Path staged = Files.write(dir.resolve("staged"), "four".getBytes(StandardCharsets.UTF_8));
        // The size check fails after the parents were made and the upload moved to the temp file.
        int exit = run(VercelFiles.placeStaged(root.resolve("a/b/c/f").toString(), staged.toString(), 5,
                WriteOptions.defaults().withCreateParents(true)));
        assertTrue(exit != 0, "a size mismatch was placed");
        assertEquals(0, entries(root), "the directories the write made were left");
        assertFalse(Files.exists(staged), "the upload was left in the staging dir");
    }

    @Test
    void anUploadThatIsGoneFailsAndLeavesTheExistingParentAlone() throws Exception {
        Path root = Files.createDirectories(dir.resolve("root"));
        Files.writeString(root.resolve("kept"), "x");
        int exit = run(VercelFiles.placeStaged(root.resolve("new/f").toString(), dir.resolve("never-uploaded").toString(), 1,
                WriteOptions.defaults().withCreateParents(true)));
        assertEquals(7, exit);
        assertFalse(Files.exists(root.resolve("new")), "the directory the write made was left");
        assertEquals(1, entries(root), "the existing parent lost or gained an entry");
    }
}
