package dev.airlock.spi;

import java.io.IOException;
import java.io.InputStream;

/**
 * A command's stdout and stderr as two bounded {@link BlockingPipe}s, for a backend whose
 * transport pushes the output (one multiplexed stream, or a reader per output): the transport's
 * threads {@link BlockingPipe#offer offer} what arrives, the core's pumps read
 * {@link #stdout()} and {@link #stderr()}. Memory is the two buffers, whatever the output's size;
 * a reader that falls behind holds the transport back.
 */
public final class OutputPipes {
    /** Where the transport writes the command's stdout. */
    public final BlockingPipe out;
    /** Where the transport writes the command's stderr. */
    public final BlockingPipe err;
    private final InputStream stdout;
    private final InputStream stderr;

    /** Two pipes of {@code capacity} bytes each. */
    public OutputPipes(int capacity) {
        this.out = new BlockingPipe(capacity);
        this.err = new BlockingPipe(capacity);
        this.stdout = out.source(() -> { });
        this.stderr = err.source(() -> { });
    }

    /** What {@link RemoteProcess#stdout()} returns. */
    public InputStream stdout() {
        return stdout;
    }

    /** What {@link RemoteProcess#stderr()} returns. */
    public InputStream stderr() {
        return stderr;
    }

    /** Both outputs ended: the readers see end-of-file after what is buffered. */
    public void end() {
        out.end();
        err.end();
    }

    /** The transport broke: both readers see {@code failure} after what is buffered. */
    public void fail(IOException failure) {
        out.fail(failure);
        err.fail(failure);
    }
}
