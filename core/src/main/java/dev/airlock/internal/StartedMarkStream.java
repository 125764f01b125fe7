package dev.airlock.internal;

import dev.airlock.shell.StdinScripts;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Strips {@link StdinScripts#STARTED_MARK}, the first byte of stdout when the script staged
 * something, and remembers whether it came: only then did the command itself start.
 */
public final class StartedMarkStream extends FilterInputStream {
    private volatile boolean seen;
    private boolean checked;

    public StartedMarkStream(InputStream in) {
        super(in);
    }

    public boolean seen() {
        return seen;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (!checked) {
            int first = in.read();
            if (first < 0) {
                return -1;
            }
            checked = true;
            if (first == StdinScripts.STARTED_MARK) {
                seen = true;
            } else {
                b[off] = (byte) first; // cannot happen with the core's scripts; never lose a byte
                return 1;
            }
        }
        return in.read(b, off, len);
    }
}
