package dev.airlock.exec;

import dev.airlock.spi.BulkInputStream;

import dev.airlock.EnvironmentClosedException;
import dev.airlock.Payload;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A backend's native writes in flight, so that closing the environment ends them as it ends execs.
 * The shell path writes through a command, and close kills that command, which releases the
 * caller's thread and removes the temp file. A native write runs on the caller's thread instead,
 * and would block for ever in a read of a source that no close, interrupt or signal can wake (a
 * JVM's stdin): so a stream's bytes are read on a worker and handed over in chunks, and close
 * makes the writer's next read fail, which lets the backend remove its temp file and give up
 * before the rename. Close waits (bounded) until every aborted write has returned.
 */
final class NativeWrites {
    private static final int CHUNK = 256 * 1024;

    private final Workers workers;
    private final Set<Write> live = ConcurrentHashMap.newKeySet();
    private boolean closed;

    NativeWrites(Workers workers) {
        this.workers = workers;
    }

    /**
     * Registers a write of {@code content}, or refuses once closed. A write re-entered for the same
     * content (a backend handing a symlinked write back to the guard) shares the outer one's source.
     */
    synchronized Write begin(Payload content, String what) {
        if (closed) {
            throw new EnvironmentClosedException("the environment is closed; " + what + " was not started; open a new one");
        }
        for (Write w : live) {
            if (w.payload == content) {
                return new Write(w.source, content, false);
            }
        }
        if (content.isRepeatable()) {
            // Bytes and files stay as they are: the backend may read them more than once (an upload
            // retried after a lost answer sends them again), and none of their reads blocks beyond a
            // close. Tracked only, so close still waits (bounded) for the write to return.
            Write w = new Write(null, content, true);
            live.add(w);
            return w;
        }
        Source source = new Source(() -> content.open(), workers);
        Payload tracked = content.length().isPresent()
                ? Payload.ofStream(source, content.length().getAsLong()) : Payload.ofStream(source);
        Write w = new Write(source, tracked, true);
        live.add(w);
        return w;
    }

    /** Registers a write that reads {@code in} (a tar stream to unpack), or refuses once closed. */
    synchronized Write begin(InputStream in, String what) {
        if (closed) {
            throw new EnvironmentClosedException("the environment is closed; " + what + " was not started; open a new one");
        }
        // Not closed by us: the caller owns the tar stream, as with the shell path.
        InputStream unclosed = new java.io.FilterInputStream(in) {
            @Override
            public void close() {
            }
        };
        Write w = new Write(new Source(() -> unclosed, workers), null, true);
        live.add(w);
        return w;
    }

    /** Makes every write in flight fail at its next read and refuses new ones; waits up to {@code nanos} for them to return. */
    void abortAll(long nanos) {
        synchronized (this) {
            closed = true;
        }
        live.forEach(w -> {
            if (w.source != null) {
                w.source.abort(true);
            }
        });
        long deadline = System.nanoTime() + nanos;
        synchronized (live) {
            while (!live.isEmpty()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(live, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** One native write: its payload (reading through the source, for a stream) and its end. */
    final class Write implements AutoCloseable {
        private final Source source;
        private final Payload payload;
        private final boolean owner;

        private Write(Source source, Payload payload, boolean owner) {
            this.source = source;
            this.payload = payload;
            this.owner = owner;
        }

        /** The payload to hand the backend. */
        Payload payload() {
            return payload;
        }

        /** The stream to hand the backend (for a tar stream). */
        InputStream stream() {
            return source;
        }

        /** Whether close made this write fail. */
        boolean aborted() {
            return source != null && source.aborted();
        }

        @Override
        public void close() {
            if (!owner) {
                return;
            }
            if (source != null) {
                source.abort(false); // the write is over: a pump still reading stops after its read
            }
            live.remove(this);
            synchronized (live) {
                live.notifyAll();
            }
        }
    }

    /** How a source is opened: on the thread that reads it. */
    private interface Opener {
        InputStream open() throws IOException;
    }

    /**
     * The bytes of a stream a write reads, failing with an {@link IOException} once aborted. A
     * worker reads the stream (two buffers, one being filled while the writer takes the other),
     * because its read may block beyond any close.
     */
    private static final class Source extends BulkInputStream {
        private final Opener opener;
        private final Workers workers;
        private final Object lock = new Object();
        private boolean started;
        private byte[] chunk;
        private int pos;
        private int len;
        private boolean eof;
        private IOException failure;
        private boolean aborted;
        private boolean closing;

        Source(Opener opener, Workers workers) {
            this.opener = opener;
            this.workers = workers;
        }

        /** Whether the environment's close made the write stop (not its own end, nor an interrupt). */
        boolean aborted() {
            synchronized (lock) {
                return closing;
            }
        }

        void abort(boolean byClose) {
            synchronized (lock) {
                closing |= byClose && !aborted;
                aborted = true;
                lock.notifyAll();
            }
        }

        @Override
        public int read(byte[] b, int off, int n) throws IOException {
            if (n == 0) {
                return 0;
            }
            synchronized (lock) {
                if (!started && !aborted) {
                    started = true;
                    workers.runAsync(this::pump);
                }
                while (chunk == null && !eof && failure == null && !aborted) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        aborted = true;
                        lock.notifyAll();
                        throw new InterruptedIOException("interrupted while reading the content to write");
                    }
                }
                if (aborted) {
                    throw closedWhileWriting();
                }
                if (chunk == null) {
                    if (failure != null) {
                        throw failure;
                    }
                    return -1;
                }
                int k = Math.min(n, len - pos);
                System.arraycopy(chunk, pos, b, off, k);
                pos += k;
                if (pos == len) {
                    chunk = null;
                    lock.notifyAll();
                }
                return k;
            }
        }

        private static IOException closedWhileWriting() {
            return new IOException("the environment was closed while writing; nothing was written");
        }

        /** The worker's loop: read a buffer, wait until the writer took the previous one, hand it over. */
        private void pump() {
            byte[][] buffers = {new byte[CHUNK], new byte[CHUNK]};
            try (InputStream in = opener.open()) {
                int i = 0;
                while (true) {
                    synchronized (lock) {
                        if (aborted) {
                            return; // the write is over: no further read of the caller's source
                        }
                    }
                    int n = in.read(buffers[i]);
                    if (n == 0) {
                        continue; // nothing to hand over; the buffer is still ours
                    }
                    synchronized (lock) {
                        while (chunk != null && !aborted) {
                            lock.wait(); // the writer holds the other buffer until it took all of it
                        }
                        if (aborted) {
                            return;
                        }
                        if (n < 0) {
                            break; // the source is closed (by the try) before the writer hears of its end
                        }
                        chunk = buffers[i];
                        pos = 0;
                        len = n;
                        lock.notifyAll();
                    }
                    i ^= 1;
                }
            } catch (IOException e) {
                synchronized (lock) {
                    failure = e;
                    lock.notifyAll();
                }
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                synchronized (lock) {
                    failure = new IOException("reading the content to write failed: " + e, e);
                    lock.notifyAll();
                }
                return;
            }
            synchronized (lock) {
                eof = true;
                lock.notifyAll();
            }
        }

        @Override
        public void close() throws IOException {
            abort(false); // a pump still reading stops after its read and closes the source itself
        }
    }
}
