package dev.airlock.exec;

import dev.airlock.DeniedException;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import dev.airlock.WriteOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shell write takes one run where the path as given is where the bytes land, and two where
 * it is not (a symlink on the way), so that the guard judges the physical place before a byte
 * lands there; either way the bytes arrive exactly and nothing is left beside the target.
 */
class ShellWriteRunsTest {
    @TempDir
    Path dir;
    private HostBackend b;

    @AfterEach
    void close() {
        if (b != null) {
            b.env.close();
        }
    }

    private static byte[] awkward() {
        byte[] bytes = new byte[70_000];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 7);
        }
        bytes[0] = 0;
        bytes[1] = (byte) 0xff; // invalid UTF-8
        return bytes;
    }

    /** How many runs {@code write} took, not counting the guard's own (its resolution of the path on the target). */
    private long runsOf(Runnable write) {
        int before = b.scriptTexts.size();
        write.run();
        return b.scriptTexts.subList(before, b.scriptTexts.size()).stream().filter(t -> !t.contains("canon() {")).count();
    }

    @Test
    void aWriteToItsOwnPhysicalPlaceIsOneRunAndExact() throws Exception {
        b = new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, true, List.of());
        Path f = dir.resolve("a/b/f.bin");
        byte[] bytes = awkward();
        assertEquals(1L, runsOf(() -> b.env.files().write(f.toString(), bytes)), "parents made in the same run");
        assertArrayEquals(bytes, Files.readAllBytes(f));
        assertEquals(1L, runsOf(() -> b.env.files().write(f.toString(), new byte[0])), "an empty file too");
        assertEquals(0, Files.size(f));
        assertEquals(List.of("f.bin"), names(f.getParent()), "no temp file left beside it");
    }

    @Test
    void aSymlinkOnTheWayTakesTheTwoRunWriteWhichJudgesWhereItLands() throws Exception {
        Path safe = Files.createDirectories(dir.resolve("safe"));
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Files.createSymbolicLink(safe.resolve("link"), outside);
        b = new HostBackend(HostBackend.settings(dir, "airlock.write.safe-roots", safe.toString()), StdinMode.PIPE, true, List.of());
        byte[] bytes = awkward();
        b.env.files().write(safe.resolve("plain").toString(), bytes);
        assertThrows(DeniedException.class, () -> b.env.files().write(safe.resolve("link/f").toString(), bytes),
                "the physical place is outside the safe roots");
        assertFalse(Files.exists(outside.resolve("f")), "not a byte landed there");
        assertEquals(List.of(), names(outside));
        Files.createSymbolicLink(safe.resolve("inside"), safe.resolve("sub"));
        Files.createDirectories(safe.resolve("sub"));
        assertTrue(runsOf(() -> b.env.files().write(safe.resolve("inside/g").toString(), bytes)) > 1);
        assertArrayEquals(bytes, Files.readAllBytes(safe.resolve("sub/g")));
    }

    @Test
    void aPayloadReadOnceOrLargerThanTheBoundTakesTwoRunsAndArrivesExactly() throws Exception {
        b = new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, true, List.of());
        byte[] bytes = awkward();
        Path f = dir.resolve("stream.bin");
        assertEquals(2L, runsOf(() -> b.env.files().write(f.toString(),
                Payload.ofStream(new ByteArrayInputStream(bytes), bytes.length), WriteOptions.defaults())));
        assertArrayEquals(bytes, Files.readAllBytes(f));
        byte[] big = new byte[(int) ShellWrite.ONE_RUN_MAX + 1];
        big[big.length - 1] = 9;
        assertEquals(2L, runsOf(() -> b.env.files().write(f.toString(), big)));
        assertArrayEquals(big, Files.readAllBytes(f));
    }

    private static List<String> names(Path d) throws Exception {
        try (var s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
