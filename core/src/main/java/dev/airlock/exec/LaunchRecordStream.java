package dev.airlock.exec;

import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.OptionalLong;

/**
 * The one parser of the launcher record (see {@link dev.airlock.shell.Launcher}): the line the
 * core's prefix prints after every staging line succeeded and right before the command runs,
 * {@code @airlock:NONCE:PID:START:ok}. Bytes before it (a remote user's startup files that print,
 * however much) are noise and dropped as they stream by: memory stays bounded whatever their size.
 * Only the first record counts, and everything after it passes through unaltered, so nothing the
 * command prints (it runs after the record) can forge it.
 *
 * <p>On stdout a missing record means the command never ran, and what came is dropped too. On
 * stderr ({@link #onStderr}) it is kept, up to its last {@link #WINDOW} bytes: that is where a
 * failed staging line says why, last.
 */
public final class LaunchRecordStream extends FilterInputStream {
    /** How much of stderr without a record is kept (its end, where a staging line says why). */
    public static final int WINDOW = 64 * 1024;
    /** The longest record line, tag included: a tag begun is held at most this long for its newline. */
    private static final int MAX_LINE = 128;

    private final byte[] tag;
    private final boolean keepWithoutRecord;
    private byte[] held = new byte[0];
    private int heldPos;
    private boolean scanning = true;
    private volatile Record record;
    private final java.util.concurrent.CountDownLatch scanned = new java.util.concurrent.CountDownLatch(1);

    /** What the record said: the shell's pid (the process group it leads) and its start time. */
    public record Record(long pid, OptionalLong startTime) {
    }

    /** The parser of stdout: without a record, nothing that came is the command's. */
    public LaunchRecordStream(InputStream in, String nonce) {
        this(in, nonce, false);
    }

    private LaunchRecordStream(InputStream in, String nonce, boolean keepWithoutRecord) {
        super(in);
        this.tag = ("@airlock:" + nonce + ":").getBytes(StandardCharsets.US_ASCII);
        this.keepWithoutRecord = keepWithoutRecord;
    }

    /** The parser of stderr: noise before the record is dropped, but without one everything is kept. */
    public static LaunchRecordStream onStderr(InputStream in, String nonce) {
        return new LaunchRecordStream(in, nonce, true);
    }

    /** Whether the record came, i.e. every staging line succeeded and the command itself started. */
    public boolean seen() {
        return record != null;
    }

    /** The record, or null when it has not come. */
    public Record record() {
        return record;
    }

    /**
     * Waits until the record came or cannot come any more (the stream ended), at most {@code max};
     * returns the record or null. Needs a reader (the output pump) meanwhile.
     */
    public Record awaitRecord(java.time.Duration max) throws InterruptedException {
        scanned.await(max.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        return record;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n == -1 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        if (scanning) {
            scan();
        }
        if (heldPos < held.length) {
            int n = Math.min(len, held.length - heldPos);
            System.arraycopy(held, heldPos, b, off, n);
            heldPos += n;
            return n;
        }
        return in.read(b, off, len);
    }

    @Override
    public int available() throws IOException {
        return scanning ? 0 : held.length - heldPos + in.available();
    }

    /**
     * Reads until the record line is complete or the stream ends. Only what may still be part of a
     * record (a tag begun, and at most one line after it) is held between reads; the noise before
     * it is dropped, or on stderr kept as its last {@link #WINDOW} bytes in case no record comes.
     */
    private void scan() throws IOException {
        byte[] buf = new byte[8192];
        Window pending = new Window();
        Tail noise = keepWithoutRecord ? new Tail(WINDOW) : null;
        int from = 0; // tags before this were looked at and are not the record
        while (true) {
            byte[] window = pending.bytes();
            int length = pending.size();
            int at;
            while ((at = indexOf(window, length, tag, from)) >= 0) {
                int nl = indexOf(window, length, new byte[] {'\n'}, at + tag.length);
                if (nl == -1 && length - at <= MAX_LINE) {
                    break; // a record cut by a read: read on
                }
                if (nl != -1 && nl - at <= MAX_LINE) {
                    Record r = parse(new String(window, at + tag.length, nl - at - tag.length, StandardCharsets.US_ASCII));
                    if (r != null) {
                        record = r;
                        held = Arrays.copyOfRange(window, nl + 1, length);
                        endScan();
                        return;
                    }
                }
                from = at + 1; // not a record: noise
            }
            // What cannot begin a record any more is noise: all before a tag begun, else all but a tag's length.
            int cut = at >= 0 ? at : Math.min(length, Math.max(from, length - tag.length + 1));
            if (noise != null) {
                noise.write(window, 0, cut);
            }
            pending = pending.dropFirst(cut);
            from = Math.max(0, from - cut);
            int n = in.read(buf, 0, buf.length);
            if (n == -1) {
                // No record: the command never started. Stdout drops it all; stderr keeps its end.
                if (noise != null) {
                    noise.write(pending.bytes(), 0, pending.size());
                    held = noise.toByteArray();
                }
                endScan();
                return;
            }
            pending.write(buf, 0, n);
        }
    }

    private void endScan() {
        heldPos = 0;
        scanning = false;
        scanned.countDown();
    }

    /** {@code PID:START:ok}; START may be empty where /proc is missing. */
    static Record parse(String rest) {
        String[] f = rest.split(":", -1);
        if (f.length != 3 || !f[2].equals("ok")) {
            return null;
        }
        try {
            long pid = Long.parseLong(f[0]);
            OptionalLong start = f[1].isEmpty() ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(f[1]));
            return new Record(pid, start);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The bytes read and not yet known to be noise, searched in place (its array is longer than what was read). */
    private static final class Window extends ByteArrayOutputStream {
        byte[] bytes() {
            return buf;
        }

        /** A window without its first {@code n} bytes. */
        Window dropFirst(int n) {
            if (n == 0) {
                return this;
            }
            Window rest = new Window();
            rest.write(buf, n, count - n);
            return rest;
        }
    }

    /** The last {@code max} bytes written (a ring). */
    private static final class Tail {
        private final byte[] ring;
        private long written;

        Tail(int max) {
            ring = new byte[max];
        }

        void write(byte[] b, int off, int len) {
            for (int i = 0; i < len; i++) {
                ring[(int) (written++ % ring.length)] = b[off + i];
            }
        }

        byte[] toByteArray() {
            int n = (int) Math.min(written, ring.length);
            byte[] out = new byte[n];
            for (int i = 0; i < n; i++) {
                out[i] = ring[(int) ((written - n + i) % ring.length)];
            }
            return out;
        }
    }

    private static int indexOf(byte[] hay, int length, byte[] needle, int from) {
        outer:
        for (int i = from; i <= length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
