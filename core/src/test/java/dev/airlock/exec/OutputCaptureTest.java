package dev.airlock.exec;

import dev.airlock.CapturedOutput;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

class OutputCaptureTest {
    @TempDir
    Path dir;

    @Test
    void keepsExactBytesAcrossHeapAndSpillAndCountsTheRest() throws Exception {
        byte[] data = new byte[3 * 1024 * 1024 + 17];
        new Random(1).nextBytes(data);
        OutputCapture c = new OutputCapture(2 * 1024 * 1024 + 5, 1024 * 1024, () -> OutputCapture.newSpillFile(dir));
        for (int off = 0; off < data.length; off += 7777) {
            c.write(data, off, Math.min(7777, data.length - off));
        }
        c.close();
        CapturedOutput out = c.result();
        assertEquals(2 * 1024 * 1024 + 5, out.size());
        assertEquals(data.length - out.size(), out.dropped());
        assertArrayEquals(Arrays.copyOf(data, (int) out.size()), out.bytes());
        try (var files = Files.list(dir)) {
            Path spill = files.findFirst().orElseThrow();
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(spill)));
        }
    }

    @Test
    void smallOutputNeverTouchesDisk() throws Exception {
        OutputCapture c = new OutputCapture(100, 1024, () -> {
            throw new AssertionError("no spill expected");
        });
        c.write(new byte[] {0, (byte) 0xff, 10});
        c.close();
        assertArrayEquals(new byte[] {0, (byte) 0xff, 10}, c.result().bytes());
        assertEquals(0, c.result().dropped());
    }

    /** What is left to keep shrinks with each byte, single bytes included, and output never downloaded counts as dropped. */
    @Test
    void roomShrinksWithWhatIsKeptAndDropsAreCounted() throws Exception {
        OutputCapture c = new OutputCapture(10, 4, () -> OutputCapture.newSpillFile(dir));
        assertEquals(10, c.room());
        c.write('a');
        c.write(new byte[] {'b', 'c', 'd', 'e', 'f'}, 0, 5);
        assertEquals(4, c.room());
        assertNotNull(c.spillPath(), "past the heap part the bytes go to a spill file");
        c.write(new byte[8], 0, 8);
        assertEquals(0, c.room());
        c.drop(100);
        c.close();
        CapturedOutput out = c.result();
        assertEquals(10, out.size());
        assertEquals(4 + 100, out.dropped());
        assertArrayEquals(new byte[] {'a', 'b', 'c', 'd', 'e', 'f', 0, 0, 0, 0}, out.bytes());
    }

    /** A spilled result's file is deleted once nobody holds the result any more, long before its environment closes. */
    @Test
    void aSpillFileIsDeletedOnceItsResultIsUnreachable() throws Exception {
        OutputCapture c = new OutputCapture(100, 4, () -> OutputCapture.newSpillFile(dir));
        c.write(new byte[10], 0, 10);
        c.close();
        Path spill = c.spillPath();
        assertEquals(10, c.result().size()); // then let go of
        long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(8);
        while (Files.exists(spill)) {
            org.junit.jupiter.api.Assertions.assertTrue(System.nanoTime() < until, "the spill file outlived its result");
            System.gc();
            Thread.sleep(20);
        }
    }
}
