package dev.airlock.vercel;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Random;
import java.util.zip.GZIPInputStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The upload's gzip compresses what shrinks and stores what does not, window by window, and the
 * stream it makes is one gzip member that unpacks to the exact bytes whatever the mix and
 * however the writes are cut.
 */
class AdaptiveGzipOutputStreamTest {
    private static final int MIB = 1 << 20;

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            o.writeBytes(p);
        }
        return o.toByteArray();
    }

    /** Gzips {@code data} in writes of the given sizes, in turn. */
    private static byte[] gzip(byte[] data, int... cuts) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        AdaptiveGzipOutputStream gz = new AdaptiveGzipOutputStream(out, 65536);
        int off = 0;
        for (int i = 0; off < data.length; i++) {
            int n = Math.min(cuts[i % cuts.length], data.length - off);
            gz.write(data, off, n);
            off += n;
        }
        gz.finish();
        return out.toByteArray();
    }

    private static byte[] gunzip(byte[] gz) throws IOException {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gz))) {
            return in.readAllBytes();
        }
    }

    @Test
    void anyMixOfContentUnpacksToTheExactBytes() throws IOException {
        byte[] data = concat(pattern(3 * MIB + 17), random(3 * MIB, 1), new byte[MIB], random(12345, 2), new byte[] {0, (byte) 0xff});
        for (int[] cuts : new int[][] {{65536}, {1, 511, 70_000, 3 * MIB}, {MIB}, {data.length}}) {
            assertArrayEquals(data, gunzip(gzip(data, cuts)), "cut in writes of " + java.util.Arrays.toString(cuts));
        }
        assertArrayEquals(new byte[0], gunzip(gzip(new byte[0], 1)), "nothing");
    }

    /**
     * A tar header (one small write) does not choose the level for the payload after it: random
     * bytes behind it are stored from their first window, where deflating at level 1 would frame
     * them in blocks of about 16 KiB instead of 64 KiB.
     */
    @Test
    void aSmallFirstWriteDoesNotChooseTheLevelOfThePayloadAfterIt() throws IOException {
        byte[] header = new byte[512];
        header[0] = 'f';
        byte[] noise = random(2 * MIB, 4);
        byte[] data = concat(header, noise);
        byte[] gz = gzip(data, 512, 65536);
        assertArrayEquals(data, gunzip(gz));
        int framing = 2 * MIB / 65535 * 5 + 5 + 18 + 64 + 64; // as below, and the header's few bytes
        assertTrue(gz.length <= noise.length + framing, "the payload took " + (gz.length - noise.length) + " bytes over its size");
        byte[] tinyWrites = gzip(data, 512, 100);
        assertArrayEquals(data, gunzip(tinyWrites), "a payload in writes too small to sample is still chosen for, and exact");
        // Up to SAMPLE bytes go at level 1 before a choice is made: a few more block headers.
        assertTrue(tinyWrites.length <= noise.length + framing + 128, "writes of 100 bytes took " + (tinyWrites.length - noise.length) + " over");
    }

    /**
     * Random bytes cost no more than stored blocks' framing (5 bytes per block of at most 64 KiB),
     * which deflating them would exceed; content that shrinks is deflated next to them.
     */
    @Test
    void incompressibleWindowsAreStoredAndTheRestDeflated() throws IOException {
        byte[] noise = random(4 * MIB, 3);
        int framing = 4 * MIB / 65535 * 5 + 5 + 18 + 64; // stored blocks, the last block, gzip header and trailer, slack
        int stored = gzip(noise, 65536).length;
        assertTrue(stored <= noise.length + framing, "random bytes took " + (stored - noise.length) + " bytes over their size");
        int mixed = gzip(concat(pattern(2 * MIB), noise, pattern(2 * MIB)), 65536).length;
        assertTrue(mixed < noise.length + 64 * 1024, "the 4 MiB of pattern around the noise were deflated: " + mixed + " bytes");
    }
}
