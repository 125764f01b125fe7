package dev.airlock.spi;

import java.io.IOException;
import java.io.InputStream;

/**
 * An {@link InputStream} that implements only the array read; the single-byte read goes
 * through it. For Airlock's streams, which all move data in chunks.
 */
public abstract class BulkInputStream extends InputStream {

    @Override
    public final int read() throws IOException {
        byte[] one = new byte[1];
        int n;
        do {
            n = read(one, 0, 1);
        } while (n == 0);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public abstract int read(byte[] b, int off, int len) throws IOException;
}
