package dev.airlock.cli;

import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.Locale;

/**
 * A progress line on stderr for transfers over 64 MiB, rewritten in place with {@code \r}; only
 * when stderr is a terminal, so pipes and log files never see it.
 */
final class Progress {
    static final long THRESHOLD = 64L << 20;
    private static final long INTERVAL_NANOS = 250_000_000L;

    private final String label;
    private final PrintStream err;
    private final boolean enabled;
    private long bytes;
    private long lastShown;
    private boolean shown;
    private boolean finished;

    Progress(String label, PrintStream err, boolean enabled) {
        this.label = label;
        this.err = err;
        this.enabled = enabled;
    }

    /** A progress line for {@code label} when stderr is a terminal, else one that prints nothing. */
    static Progress onStderr(String label) {
        return new Progress(label, System.err, Terminals.isTerminal(Terminals.STDERR));
    }

    synchronized void add(long n) {
        bytes += n;
        if (!enabled || finished || bytes <= THRESHOLD) {
            return;
        }
        long now = System.nanoTime();
        if (!shown || now - lastShown >= INTERVAL_NANOS) {
            show();
            lastShown = now;
        }
    }

    /** Ends the line (once) if one was shown, so the next output starts on a fresh line. */
    synchronized void finish() {
        if (finished) {
            return;
        }
        finished = true;
        if (shown) {
            show();
            err.print('\n');
            err.flush();
        }
    }

    private void show() {
        shown = true;
        err.print(String.format(Locale.ROOT, "\rairlock: %s: %.1f MiB", label, bytes / 1048576.0));
        err.flush();
    }

    InputStream wrap(InputStream in) {
        return new FilterInputStream(in) {
            @Override
            public int read() throws IOException {
                int b = super.read();
                count(b < 0 ? -1 : 1);
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = super.read(b, off, len);
                count(n);
                return n;
            }

            private void count(int n) {
                if (n < 0) {
                    finish();
                } else {
                    add(n);
                }
            }
        };
    }

    OutputStream wrap(OutputStream out) {
        return new FilterOutputStream(out) {
            @Override
            public void write(int b) throws IOException {
                out.write(b);
                add(1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                out.write(b, off, len);
                add(len);
            }
        };
    }
}
