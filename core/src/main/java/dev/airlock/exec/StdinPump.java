package dev.airlock.exec;

import dev.airlock.Payload;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.spi.StdinWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Streams the caller's payload into a command's stdin, then ends it: through the process's pipe
 * (PIPE backends), or in chunks by offset through the backend's {@link StdinWriter} (streamed
 * PAYLOAD). A failure of the caller's source runs {@code onSourceFailure} (the core kills the tree
 * before the command can take a short input for the whole); a failure on the command's side is a
 * command that stopped reading, like a pipeline's SIGPIPE.
 */
final class StdinPump implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(StdinPump.class);
    private static final int PIPE_CHUNK = 64 * 1024;
    private static final Duration CHUNK_BOUND = Duration.ofMinutes(5);

    /** Where the bytes go: a pipe or a backend's writer. */
    private interface Target {
        void write(byte[] b, int n) throws IOException;

        void end() throws IOException;

        int chunk();

        /** After the last write, whatever happened: frees the transport's end. */
        default void release() {
        }

        /** The transport refused a write or the end: the command's stdin is in an unknown state. */
        default void failed() {
        }
    }

    private final Target to;
    private final Payload payload;
    private final Runnable onSourceFailure;
    private final CountDownLatch end = new CountDownLatch(1);
    private volatile boolean readingSource;
    private volatile IOException failure;
    private volatile IOException transportFailure;

    private StdinPump(Target to, Payload payload, Runnable onSourceFailure) {
        this.to = to;
        this.payload = payload;
        this.onSourceFailure = onSourceFailure;
    }

    /** Into the process's stdin pipe, flushed per read (a live source must not wait in a buffer), closed at the end. */
    static StdinPump pipe(OutputStream stdin, Payload payload, Runnable onSourceFailure) {
        return new StdinPump(new Target() {
            @Override
            public void write(byte[] b, int n) throws IOException {
                stdin.write(b, 0, n);
                stdin.flush();
            }

            @Override
            public void end() throws IOException {
                stdin.close();
            }

            @Override
            public int chunk() {
                return PIPE_CHUNK;
            }

            @Override
            public void release() {
                CoreEnvironment.closeQuietly(stdin);
            }
        }, payload, onSourceFailure);
    }

    /**
     * Through a streamed-PAYLOAD backend's writer, by offset, with an explicit end. When the writer
     * fails the command's stdin is neither whole nor ended, so the command would wait for ever or
     * take a short input: {@code onSourceFailure} kills it then too.
     */
    static StdinPump streamed(StdinWriter writer, RemoteProcess process, Payload payload, Runnable onSourceFailure) {
        return new StdinPump(new Target() {
            private long offset;

            @Override
            public void write(byte[] b, int n) throws IOException {
                writer.write(process, offset, b, n, Deadline.in(CHUNK_BOUND));
                offset += n;
            }

            @Override
            public void end() throws IOException {
                writer.end(process, offset, Deadline.in(CHUNK_BOUND));
            }

            @Override
            public int chunk() {
                return StdinWriter.CHUNK;
            }

            @Override
            public void failed() {
                onSourceFailure.run();
            }
        }, payload, onSourceFailure);
    }

    @Override
    public void run() {
        byte[] buf = new byte[to.chunk()];
        boolean ended = false;
        try (InputStream in = payload.open()) {
            int n;
            while ((n = readSource(in, buf)) >= 0) {
                if (n > 0) {
                    to.write(buf, n);
                }
            }
            ended = true;
            to.end();
        } catch (SourceFailure e) {
            // The caller's payload broke: the command must not take a short input for the whole.
            failure = (IOException) e.getCause();
            onSourceFailure.run();
        } catch (dev.airlock.spi.StdinClosedException e) {
            // The command closed its stdin or exited (a streamed backend's EPIPE): it runs on.
            LOG.debug("the command stopped reading its stdin: {}", e.getMessage());
        } catch (IOException | RuntimeException e) {
            // The command exited without reading all of its input, like a pipeline's SIGPIPE (or
            // the transport failed: a streamed stdin is then killed, never left open or short).
            LOG.debug("stdin not fully delivered{}: {}", ended ? " (at its end)" : "", e.getMessage());
            transportFailure = e instanceof IOException io ? io : new IOException(e.toString(), e);
            to.failed();
        } finally {
            to.release();
            end.countDown();
        }
    }

    private int readSource(InputStream in, byte[] buf) throws SourceFailure {
        readingSource = true;
        try {
            return in.read(buf);
        } catch (IOException | RuntimeException e) {
            throw new SourceFailure(e instanceof IOException io ? io : new IOException(e.toString(), e));
        } finally {
            readingSource = false;
        }
    }

    /**
     * Ends the input where it stands, for a failure callback whose caller reports the failure
     * itself (an internal script's upload: its short file is then refused, never used).
     */
    void endQuietly() {
        try {
            to.end();
        } catch (IOException | RuntimeException e) {
            LOG.debug("could not end stdin after a failure: {}", e.getMessage());
        }
    }

    /** The caller's source failed (its message is the exec's error), or null. */
    IOException failure() {
        return failure;
    }

    /** The transport refused a write or the end (for a command: it stopped reading), or null. */
    IOException transportFailure() {
        return transportFailure;
    }

    /**
     * Called after the command exited. A pump blocked reading the caller's source (an idle pipe
     * that is never closed, like an agent's stdin) would never end: the input has nowhere to go
     * any more, so do not wait for it.
     */
    void awaitEnd() throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!end.await(10, TimeUnit.MILLISECONDS)) {
            if (readingSource || System.nanoTime() > until) {
                return;
            }
        }
    }

    /** Marks a failure of the caller's payload, as opposed to the command's end of the pipe. */
    private static final class SourceFailure extends IOException {
        private static final long serialVersionUID = 1L;

        SourceFailure(IOException cause) {
            super(cause);
        }
    }
}
