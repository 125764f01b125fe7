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
 * {@code @airlock:NONCE:PID:START:ok}. Bytes before it (a remote user's startup files that print)
 * are dropped; it is looked for only in the first {@link #WINDOW} bytes and only once, so nothing
 * the command prints afterwards can forge it. Everything after it passes through unaltered.
 *
 * <p>On stdout a missing record means the command never ran, and what came is dropped too. On
 * stderr ({@link #onStderr}) it is kept: that is where a failed staging line says why.
 */
public final class LaunchRecordStream extends FilterInputStream {
    /** How far into stdout the record is looked for. */
    public static final int WINDOW = 64 * 1024;
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
     * Waits until the record came or cannot come any more (the window passed or the stream ended),
     * at most {@code max}; returns the record or null. Needs a reader (the output pump) meanwhile.
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

    /** Reads until the record line is complete, the window is full, or the stream ends. */
    private void scan() throws IOException {
        byte[] buf = new byte[8192];
        Window read = new Window();
        while (true) {
            byte[] window = read.bytes();
            int length = read.size();
            int at = indexOf(window, length, tag);
            if (at >= 0) {
                int nl = indexOf(window, length, new byte[] {'\n'}, at);
                if (nl != -1) {
                    Record r = parse(new String(window, at + tag.length, nl - at - tag.length, StandardCharsets.US_ASCII));
                    if (r != null) {
                        record = r;
                        held = Arrays.copyOfRange(window, nl + 1, length);
                        break;
                    }
                } else if (length - at <= MAX_LINE) {
                    // a record split across reads: read on
                    at = -2;
                }
            }
            // Past the window only a record already begun is read on, and only as far as one line goes.
            if (length >= WINDOW && at != -2 && !(length < WINDOW + MAX_LINE && endsInTagStart(window, length))) {
                held = read.toByteArray(); // no record: the command never started; keep what came
                break;
            }
            int n = in.read(buf, 0, buf.length);
            if (n == -1) {
                held = read.toByteArray();
                break;
            }
            read.write(buf, 0, n);
        }
        if (record == null && !keepWithoutRecord) {
            // Before the record there is nothing of the command's: startup-file noise, or nothing.
            held = new byte[0];
        }
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

    /** Whether the bytes read so far end in the start of a tag: a record cut by a read, maybe at the window's end. */
    private boolean endsInTagStart(byte[] window, int length) {
        for (int k = Math.min(tag.length - 1, length); k > 0; k--) {
            if (Arrays.equals(window, length - k, length, tag, 0, k)) {
                return true;
            }
        }
        return false;
    }

    /** The bytes read so far, searched in place (its array is longer than what was read). */
    private static final class Window extends ByteArrayOutputStream {
        byte[] bytes() {
            return buf;
        }
    }

    private static int indexOf(byte[] hay, int length, byte[] needle) {
        return indexOf(hay, length, needle, 0);
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
