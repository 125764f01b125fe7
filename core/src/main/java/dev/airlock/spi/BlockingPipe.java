package dev.airlock.spi;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;

/**
 * A bounded in-memory pipe between a producer thread (an exec's drain) and a consumer (the
 * caller reading a file). Memory is bounded by the buffer; the producer blocks while it is full.
 * Closing the reading side makes the producer's writes fail fast, so the exec can be cancelled.
 */
public final class BlockingPipe {
    private final byte[] buf;
    private int readPos;
    private int count;
    private boolean writerClosed;
    private boolean readerClosed;
    private IOException failure;

    public BlockingPipe(int capacity) {
        this.buf = new byte[capacity];
    }

    public final OutputStream sink = new OutputStream() {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (!offer(b, off, len)) {
                throw new IOException("reader closed the stream");
            }
        }

        @Override
        public void close() {
            synchronized (BlockingPipe.this) {
                writerClosed = true;
                BlockingPipe.this.notifyAll();
            }
        }
    };

    /**
     * Writes all of {@code b[off, off + len)}, waiting while the pipe is full; false, with the rest
     * dropped, once the reader closed its side. A transport that must keep draining its connection
     * for the other output goes on writing (each later call returns false at once); one that reads
     * this output alone may stop reading it.
     *
     * @throws InterruptedIOException when interrupted while the pipe is full
     */
    public synchronized boolean offer(byte[] b, int off, int len) throws InterruptedIOException {
        while (len > 0) {
            while (count == buf.length && !readerClosed) {
                waitQuietly();
            }
            if (readerClosed) {
                return false;
            }
            int writePos = (readPos + count) % buf.length;
            int n = Math.min(len, Math.min(buf.length - count, buf.length - writePos));
            System.arraycopy(b, off, buf, writePos, n);
            count += n;
            off += n;
            len -= n;
            notifyAll();
        }
        return true;
    }

    /** Ends the stream normally: the reader sees end-of-file after the buffered bytes. */
    public synchronized void end() {
        writerClosed = true;
        notifyAll();
    }

    /** Ends the stream with an error the reader sees after the buffered bytes. */
    public synchronized void fail(IOException e) {
        failure = e;
        writerClosed = true;
        notifyAll();
    }

    public synchronized boolean isReaderClosed() {
        return readerClosed;
    }

    private void waitQuietly() throws InterruptedIOException {
        try {
            wait();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting on the pipe");
        }
    }

    /** The reading side; {@code onClose} runs once when the reader closes it. */
    public InputStream source(Runnable onClose) {
        return new BulkInputStream() {
            private boolean closed;

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (len == 0) {
                    return 0;
                }
                synchronized (BlockingPipe.this) {
                    while (count == 0 && !writerClosed) {
                        waitQuietly();
                    }
                    if (count == 0) {
                        if (failure != null) {
                            throw failure;
                        }
                        return -1;
                    }
                    int n = Math.min(len, Math.min(count, buf.length - readPos));
                    System.arraycopy(buf, readPos, b, off, n);
                    readPos = (readPos + n) % buf.length;
                    count -= n;
                    BlockingPipe.this.notifyAll();
                    return n;
                }
            }

            @Override
            public int available() {
                synchronized (BlockingPipe.this) {
                    return count;
                }
            }

            @Override
            public void close() {
                boolean first;
                synchronized (BlockingPipe.this) {
                    first = !closed;
                    closed = true;
                    readerClosed = true;
                    BlockingPipe.this.notifyAll();
                }
                if (first) {
                    onClose.run();
                }
            }
        };
    }
}
