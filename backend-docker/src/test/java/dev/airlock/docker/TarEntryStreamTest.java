package dev.airlock.docker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one-entry archive the Docker archive route uploads: whole and byte-exact when the source
 * gives what it declared (read back by this host's {@code tar}); ended early, never thrown, when
 * it does not, so the daemon's answer comes after it stopped unpacking and the write's clean-up
 * cannot race it.
 */
class TarEntryStreamTest {
    private static final int BLOCK = 512;

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[700]; // not a multiple of a block: reads cross the header's and the data's ends
        int n;
        while ((n = in.read(buf, 0, buf.length)) >= 0) {
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }

    private static TarEntryStream entry(long declared, InputStream source) {
        return new TarEntryStream("f", 0640, 0, 0, declared, 1_700_000_000L, source);
    }

    @Test
    void aWholeSourceMakesAnArchiveThisHostsTarUnpacksByteExact(@TempDir Path dir) throws Exception {
        byte[] data = new byte[3 * BLOCK + 17];
        new Random(3).nextBytes(data);
        data[0] = 0;
        TarEntryStream tar = entry(data.length, new ByteArrayInputStream(data));
        byte[] archive = readAll(tar);
        assertNull(tar.failure());
        assertEquals(BLOCK + 4 * BLOCK + 2 * BLOCK, archive.length, "header, data padded to a block, two end blocks");
        Path file = dir.resolve("a.tar");
        Files.write(file, archive);
        Process p = new ProcessBuilder("tar", "-xf", file.toString(), "-C", dir.toString()).redirectErrorStream(true).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), new String(p.getInputStream().readAllBytes()));
        assertArrayEquals(data, Files.readAllBytes(dir.resolve("f")));
    }

    @Test
    void aSourceEndingEarlyEndsTheArchiveAtOnceWithoutThrowing() throws Exception {
        TarEntryStream tar = entry(20, new ByteArrayInputStream(new byte[10]));
        byte[] archive = readAll(tar);
        assertEquals(BLOCK + 10, archive.length, "the header and the ten bytes, no padding or end blocks");
        assertTrue(tar.failure().getMessage().contains("ended after 10 bytes, not the 20"), tar.failure().getMessage());
        assertEquals(-1, tar.read(new byte[8], 0, 8), "and it stays ended");
    }

    @Test
    void aSourceLongerThanDeclaredEndsTheArchiveBeforeItsEndBlocks() throws Exception {
        TarEntryStream tar = entry(BLOCK, new ByteArrayInputStream(new byte[BLOCK + 1]));
        byte[] archive = readAll(tar);
        assertEquals(2 * BLOCK, archive.length, "the header and the declared bytes, no end blocks");
        assertTrue(tar.failure().getMessage().contains("longer than the 512 bytes"), tar.failure().getMessage());
    }

    @Test
    void aFailingSourceEndsTheArchiveAndKeepsItsFailure() throws Exception {
        IOException broken = new IOException("disk gone");
        InputStream source = new InputStream() {
            private int left = 5;

            @Override
            public int read() throws IOException {
                if (left-- > 0) {
                    return 'x';
                }
                throw broken;
            }
        };
        TarEntryStream tar = entry(100, source);
        byte[] archive = readAll(tar);
        assertEquals(BLOCK + 5, archive.length);
        assertEquals(broken, tar.failure());
    }
}
