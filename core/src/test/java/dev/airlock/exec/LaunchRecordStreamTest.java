package dev.airlock.exec;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The launcher record's one parser: noise before is dropped, forgeries after pass as output, splits are joined. */
class LaunchRecordStreamTest {
    private static final String NONCE = "0123456789abcdef0123456789abcdef";
    private static final String RECORD = "\n@airlock:" + NONCE + ":4242:987654:ok\n";

    private static String readAll(LaunchRecordStream s) throws IOException {
        return new String(s.readAllBytes(), StandardCharsets.UTF_8);
    }

    @Test
    void recordAloneIsStrippedAndParsed() throws IOException {
        LaunchRecordStream s = new LaunchRecordStream(new ByteArrayInputStream((RECORD + "out").getBytes()), NONCE);
        assertEquals("out", readAll(s));
        assertTrue(s.seen());
        assertEquals(4242, s.record().pid());
        assertEquals(OptionalLong.of(987654), s.record().startTime());
    }

    @Test
    void startupNoiseBeforeTheRecordIsDropped() throws IOException {
        String noise = "Welcome!\nlast login: never\n";
        LaunchRecordStream s = new LaunchRecordStream(new ByteArrayInputStream((noise + RECORD + "out\n").getBytes()), NONCE);
        assertEquals("out\n", readAll(s));
        assertTrue(s.seen());
    }

    @Test
    void aForgedRecordAfterTheRealOneIsOutputAndChangesNothing() throws IOException {
        String forged = "\n@airlock:" + NONCE + ":1:2:ok\n";
        LaunchRecordStream s = new LaunchRecordStream(new ByteArrayInputStream((RECORD + "a" + forged).getBytes()), NONCE);
        assertEquals("a" + forged, readAll(s));
        assertEquals(4242, s.record().pid());
    }

    @Test
    void aRecordWithAnotherNonceIsNotTheRecord() throws IOException {
        String other = "\n@airlock:ffffffffffffffffffffffffffffffff:1:2:ok\n";
        LaunchRecordStream s = new LaunchRecordStream(new ByteArrayInputStream(other.getBytes()), NONCE);
        assertEquals("", readAll(s), "what came before a record that never came is not the command's");
        assertFalse(s.seen());
        assertNull(s.record());
    }

    @Test
    void onStderrNoiseBeforeTheRecordIsDroppedButWithoutARecordEverythingIsKept() throws IOException {
        LaunchRecordStream started = LaunchRecordStream.onStderr(
                new ByteArrayInputStream(("rm: cannot remove 'x'\n" + RECORD + "err\0").getBytes()), NONCE);
        assertEquals("err\0", readAll(started));
        String why = "banner\nsh: 3: cannot open /p/s: No such file\n";
        LaunchRecordStream failed = LaunchRecordStream.onStderr(new ByteArrayInputStream(why.getBytes()), NONCE);
        assertEquals(why, readAll(failed), "a staging line's reason was dropped with the noise");
        assertFalse(failed.seen());
    }

    @Test
    void aRecordSplitAcrossReadsIsJoined() throws IOException {
        byte[] all = ("noise" + RECORD + "tail").getBytes();
        InputStream oneByteAtATime = new InputStream() {
            int i;

            @Override
            public int read() {
                return i < all.length ? all[i++] : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (i >= all.length) {
                    return -1;
                }
                b[off] = all[i++];
                return 1;
            }
        };
        LaunchRecordStream s = new LaunchRecordStream(oneByteAtATime, NONCE);
        assertEquals("tail", readAll(s));
        assertEquals(987654, s.record().startTime().getAsLong());
    }

    @Test
    void aRecordWithoutStartTimeHasNone() throws IOException {
        LaunchRecordStream s = new LaunchRecordStream(new ByteArrayInputStream(("\n@airlock:" + NONCE + ":7::ok\nx").getBytes()), NONCE);
        assertEquals("x", readAll(s));
        assertEquals(OptionalLong.empty(), s.record().startTime());
    }

    @Test
    void malformedRecordsAreRefused() {
        assertNull(LaunchRecordStream.parse("1:2:no"));
        assertNull(LaunchRecordStream.parse("x:2:ok"));
        assertNull(LaunchRecordStream.parse("1:y:ok"));
        assertNull(LaunchRecordStream.parse("1:2"));
        assertEquals(1, LaunchRecordStream.parse("1:2:ok").pid());
    }

    @Test
    void withoutARecordNothingPassesHoweverMuchCame() throws IOException {
        byte[] big = new byte[LaunchRecordStream.WINDOW * 3 + 10];
        LaunchRecordStream s = new LaunchRecordStream(chunked(big, 8192), NONCE);
        assertEquals(0, s.readAllBytes().length, "noise of a command that never started passed as its output");
        assertFalse(s.seen());
    }

    /**
     * Issue 33, defect 9: more start-up noise than the window before the record. The record is
     * still found (the command ran: its exit code is its own, not a staging failure), and neither
     * the noise nor the record line with its nonce reaches the output.
     */
    @Test
    void aRecordAfterMoreNoiseThanTheWindowIsFoundAndTheNoiseDropped() throws IOException {
        LaunchRecordStream out = new LaunchRecordStream(
                chunked(afterNoise(3 * LaunchRecordStream.WINDOW, RECORD + "out"), 8192), NONCE);
        assertEquals("out", readAll(out));
        assertEquals(new LaunchRecordStream.Record(4242, OptionalLong.of(987654)), out.record());

        LaunchRecordStream err = LaunchRecordStream.onStderr(
                chunked(afterNoise(3 * LaunchRecordStream.WINDOW, RECORD + "err"), 8192), NONCE);
        assertEquals("err", readAll(err));
        assertTrue(err.seen());
    }

    /** Stderr without a record keeps the end of what came (where the shell says why), bounded by the window. */
    @Test
    void onStderrWithoutARecordTheLastWindowIsKept() throws IOException {
        String why = "sh: 3: cannot open /p/s: No such file\n";
        LaunchRecordStream s = LaunchRecordStream.onStderr(
                chunked(afterNoise(3 * LaunchRecordStream.WINDOW, why), 8192), NONCE);
        String kept = readAll(s);
        assertEquals(LaunchRecordStream.WINDOW, kept.length());
        assertTrue(kept.endsWith("n" + why), "the staging line's reason was not kept: ..." + kept.substring(kept.length() - 60));
        assertFalse(s.seen());
    }

    /** Read a byte at a time (as a reader on top may): bytes above 0x7f are bytes, not end of stream. */
    @Test
    void singleByteReadsGiveEveryByteAndThenTheEnd() throws IOException {
        byte[] out = {(byte) 0xff, 0, 'x'};
        byte[] in = new byte[RECORD.length() + out.length];
        System.arraycopy(RECORD.getBytes(StandardCharsets.US_ASCII), 0, in, 0, RECORD.length());
        System.arraycopy(out, 0, in, RECORD.length(), out.length);
        LaunchRecordStream s = new LaunchRecordStream(new ByteArrayInputStream(in), NONCE);
        assertEquals(0xff, s.read());
        assertEquals(0, s.read());
        assertEquals('x', s.read());
        assertEquals(-1, s.read());
        assertTrue(s.seen());
    }

    /** Until the record was looked for nothing is available; after it, what is held and what follows is. */
    @Test
    void availableCountsHeldBytesOnlyOnceTheRecordWasFound() throws IOException {
        LaunchRecordStream s = new LaunchRecordStream(new ByteArrayInputStream((RECORD + "abcd").getBytes()), NONCE);
        assertEquals(0, s.available(), "bytes before the record are not the command's");
        byte[] two = new byte[2];
        assertEquals(0, s.read(two, 0, 0), "a read of nothing reads nothing");
        assertEquals(2, s.read(two, 0, 2));
        assertEquals("ab", new String(two, StandardCharsets.US_ASCII));
        assertEquals(2, s.available());
        assertEquals("cd", readAll(s));
        assertEquals(0, s.available());
    }

    /** A record at the very start of the stream (no noise, no newline before it) is the record too. */
    @Test
    void aRecordAtTheFirstByteIsFound() throws IOException {
        LaunchRecordStream s = new LaunchRecordStream(new ByteArrayInputStream(("@airlock:" + NONCE + ":5:6:ok\nout").getBytes()), NONCE);
        assertEquals("out", readAll(s));
        assertEquals(5, s.record().pid());
    }

    /** A record that starts just inside the window and ends past it is still joined and found. */
    @Test
    void aRecordStraddlingTheWindowsEndIsFound() throws IOException {
        byte[] noise = new byte[LaunchRecordStream.WINDOW - 20];
        java.util.Arrays.fill(noise, (byte) 'n');
        byte[] all = (new String(noise, StandardCharsets.US_ASCII) + RECORD + "out").getBytes(StandardCharsets.US_ASCII);
        LaunchRecordStream s = new LaunchRecordStream(chunked(all, 8192), NONCE);
        assertEquals("out", readAll(s));
        assertTrue(s.seen(), "the record crossing the window's end was given up on");
        // the tag itself inside the window, the rest of its line past it
        byte[] inside = new byte[LaunchRecordStream.WINDOW - 50];
        java.util.Arrays.fill(inside, (byte) 'n');
        byte[] all2 = (new String(inside, StandardCharsets.US_ASCII) + RECORD + "out").getBytes(StandardCharsets.US_ASCII);
        LaunchRecordStream s2 = new LaunchRecordStream(chunked(all2, 8192), NONCE);
        assertEquals("out", readAll(s2));
        assertTrue(s2.seen(), "a record line finished past the window's end was given up on");
    }

    /** Tag starts again and again are noise: none is held longer than a record line, and none is taken for the record. */
    @Test
    void tagStartsAgainAndAgainAreNoise() throws IOException {
        byte[] all = new byte[LaunchRecordStream.WINDOW * 4];
        java.util.Arrays.fill(all, (byte) '@');
        LaunchRecordStream s = new LaunchRecordStream(chunked(all, 4096), NONCE);
        assertEquals(-1, s.read(new byte[1], 0, 1));
        assertFalse(s.seen());
    }

    /** What the record's read held back and what the source still has both count as available. */
    @Test
    void availableAddsWhatWasHeldToWhatTheSourceStillHas() throws IOException {
        byte[] all = (RECORD + "0123456789abcdefghij").getBytes(StandardCharsets.US_ASCII);
        LaunchRecordStream s = new LaunchRecordStream(chunked(all, RECORD.length() + 4), NONCE);
        assertEquals('0', s.read());
        assertEquals(19, s.available(), "3 held after the record plus 16 the source has");
        assertEquals("123456789abcdefghij", readAll(s));
    }

    /** The record is waited for while a reader drains the stream; without one it is null once the stream ended. */
    @Test
    void awaitRecordGivesTheRecordOrNullOnceTheStreamEnded() throws Exception {
        LaunchRecordStream with = new LaunchRecordStream(new ByteArrayInputStream((RECORD + "x").getBytes()), NONCE);
        Thread reader = new Thread(() -> {
            try {
                with.readAllBytes();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        reader.start();
        LaunchRecordStream.Record r = with.awaitRecord(java.time.Duration.ofSeconds(20));
        assertEquals(new LaunchRecordStream.Record(4242, OptionalLong.of(987654)), r);
        reader.join();

        LaunchRecordStream without = new LaunchRecordStream(new ByteArrayInputStream("no record".getBytes()), NONCE);
        assertEquals("", readAll(without));
        long began = System.nanoTime();
        assertNull(without.awaitRecord(java.time.Duration.ofSeconds(20)));
        assertTrue(System.nanoTime() - began < java.util.concurrent.TimeUnit.SECONDS.toNanos(10),
                "awaitRecord waited out its bound although the stream had ended");
    }

    /** A command that prints nothing: the record's newline is the stream's last byte, and it is the record. */
    @Test
    void aRecordThatEndsTheStreamIsFound() throws IOException {
        LaunchRecordStream s = new LaunchRecordStream(new ByteArrayInputStream(("@airlock:" + NONCE + ":5:6:ok\n").getBytes()), NONCE);
        assertEquals("", readAll(s));
        assertEquals(new LaunchRecordStream.Record(5, OptionalLong.of(6)), s.record());
    }

    /**
     * A record line of the longest length (tag to newline, 128 bytes) whose newline comes right
     * after the window is found; one byte longer and it is noise.
     */
    @Test
    void aRecordLineOfTheLongestLengthFinishedPastTheWindowIsFoundAndALongerOneIsNot() throws IOException {
        String tag = "@airlock:" + NONCE + ":";
        String longest = tag + "0".repeat(128 - tag.length() - ":987654:ok".length() - 4) + "4242:987654:ok";
        assertEquals(128, longest.length());
        LaunchRecordStream s = new LaunchRecordStream(chunked(afterNoise(LaunchRecordStream.WINDOW - 128, longest + "\nout"), 8192), NONCE);
        assertEquals("out", readAll(s));
        assertEquals(new LaunchRecordStream.Record(4242, OptionalLong.of(987654)), s.record());

        LaunchRecordStream longer = new LaunchRecordStream(chunked(afterNoise(LaunchRecordStream.WINDOW - 129,
                tag + "0" + longest.substring(tag.length()) + "\nmore noise" + RECORD + "out"), 8192), NONCE);
        assertEquals("out", readAll(longer), "a line too long to be the record is noise; the record after it counts");
        assertEquals(new LaunchRecordStream.Record(4242, OptionalLong.of(987654)), longer.record());
    }

    /** A record cut by reads anywhere, far past the window too, is joined and found. */
    @Test
    void aRecordCutByReadsFarPastTheWindowIsFound() throws IOException {
        String rest = NONCE + ":4242:987654:ok\nout";
        byte[][] reads = new byte[10][];
        for (int i = 0; i < 8; i++) {
            reads[i] = new byte[8192];
            java.util.Arrays.fill(reads[i], (byte) 'n');
        }
        reads[7][8191] = '@'; // a tag's first byte that is noise
        reads[8] = ("n".repeat(128 - "@airlock:".length()) + "@airlock:").getBytes(StandardCharsets.US_ASCII);
        reads[9] = rest.getBytes(StandardCharsets.US_ASCII);
        LaunchRecordStream s = new LaunchRecordStream(inReads(reads), NONCE);
        assertEquals("out", readAll(s));
        assertTrue(s.seen());
    }

    /** {@code n} bytes of noise, then {@code text}. */
    private static byte[] afterNoise(int n, String text) {
        return ("n".repeat(n) + text).getBytes(StandardCharsets.US_ASCII);
    }

    /** A source whose reads give exactly the given pieces, in order. */
    private static InputStream inReads(byte[]... reads) {
        return new InputStream() {
            int i;

            @Override
            public int read() {
                throw new UnsupportedOperationException();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (i == reads.length) {
                    return -1;
                }
                assertTrue(len >= reads[i].length, "a read too short for its piece");
                System.arraycopy(reads[i], 0, b, off, reads[i].length);
                return reads[i++].length;
            }
        };
    }

    /** A source that gives at most {@code max} bytes per read and says how many it still has. */
    private static InputStream chunked(byte[] all, int max) {
        return new ByteArrayInputStream(all) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, max));
            }
        };
    }
}
