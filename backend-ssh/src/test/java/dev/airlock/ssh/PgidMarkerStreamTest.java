package dev.airlock.ssh;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class PgidMarkerStreamTest {
    private static final String MARKER = "@airlock-pgid-0123abcd:";

    /** Hands out at most one byte per read, so every split point of the marker is exercised. */
    private static InputStream trickle(byte[] b) {
        return new FilterInputStream(new ByteArrayInputStream(b)) {
            @Override
            public int read(byte[] buf, int off, int len) throws IOException {
                return super.read(buf, off, Math.min(1, len));
            }
        };
    }

    private static byte[] drain(InputStream in) throws IOException {
        return in.readAllBytes();
    }

    @Test
    void theMarkerLineIsRemovedAndItsNumberKept() throws Exception {
        for (boolean slow : new boolean[] {false, true}) {
            byte[] raw = ("noise from .bashrc\n" + MARKER + "4242\nreal\0err@airlock").getBytes(StandardCharsets.ISO_8859_1);
            PgidMarkerStream s = new PgidMarkerStream(slow ? trickle(raw) : new ByteArrayInputStream(raw), MARKER);
            assertArrayEquals("noise from .bashrc\nreal\0err@airlock".getBytes(StandardCharsets.ISO_8859_1), drain(s));
            assertEquals(OptionalLong.of(4242), s.pgid(0));
        }
    }

    @Test
    void aForeignOrBrokenMarkerPassesThroughUntouched() throws Exception {
        String text = "@airlock-pgid-ffff:1\n" + MARKER + "12x\n@@airlock " + MARKER.substring(0, 10);
        PgidMarkerStream s = new PgidMarkerStream(trickle(text.getBytes(StandardCharsets.UTF_8)), MARKER);
        assertEquals(text, new String(drain(s), StandardCharsets.UTF_8));
        assertEquals(OptionalLong.empty(), s.pgid(0));
    }

    @Test
    void withoutAMarkerEverythingPassesAndTheGroupIsUnknown() throws Exception {
        byte[] big = new byte[PgidMarkerStream.SCAN_LIMIT * 2 + 5];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) i;
        }
        PgidMarkerStream s = new PgidMarkerStream(new ByteArrayInputStream(big), MARKER);
        assertArrayEquals(big, drain(s));
        assertEquals(OptionalLong.empty(), s.pgid(0));
    }

    @Test
    void onlyTheFirstMarkerIsTaken() throws Exception {
        String text = MARKER + "7\n" + MARKER + "8\n";
        PgidMarkerStream s = new PgidMarkerStream(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), MARKER);
        assertEquals(MARKER + "8\n", new String(drain(s), StandardCharsets.UTF_8));
        assertEquals(OptionalLong.of(7), s.pgid(0));
    }
}
