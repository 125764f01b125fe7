package dev.airlock.exec;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Copies one of a command's output streams into a sink, 64 KiB at a time, on its own thread.
 * After the command exits, {@link #finish} waits for end-of-output, but gives up on a pipe that a
 * background process holds open; a slow sink is never mistaken for that.
 */
public final class OutputPump implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(OutputPump.class);
    private static final int CHUNK = 64 * 1024;

    private final InputStream from;
    private final OutputStream to;
    private final CountDownLatch end = new CountDownLatch(1);
    private volatile long lastActivity = System.nanoTime();
    private volatile boolean detached;
    /** Held while a chunk goes into the sink, so {@link #detach} knows none is in flight after it. */
    private final Object sinkLock = new Object();
    /** In the caller's sink: a slow reader is not an idle command, so never give up then. */
    private volatile boolean writing;
    private volatile IOException failure;

    public OutputPump(InputStream from, OutputStream to) {
        this.from = from;
        this.to = to;
    }

    @Override
    public void run() {
        byte[] buf = new byte[CHUNK];
        try {
            int n;
            while ((n = from.read(buf)) != -1) {
                lastActivity = System.nanoTime();
                synchronized (sinkLock) {
                    if (detached) {
                        continue; // a background process still writes after we gave up: discard
                    }
                    writing = true;
                    try {
                        to.write(buf, 0, n);
                    } catch (IOException | RuntimeException e) {
                        // A sink that throws anything (a full disk, a gone spill dir, a caller's bug)
                        // must not end the drain: the command would block on a full pipe forever.
                        if (failure == null) {
                            failure = e instanceof IOException io ? io : new IOException(e.toString(), e);
                        }
                        detached = true; // keep draining so the command never blocks on a full pipe
                    } finally {
                        writing = false;
                        lastActivity = System.nanoTime();
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!detached) {
                LOG.debug("output stream ended with an error: {}", e.getMessage());
            }
        } finally {
            end.countDown();
        }
    }

    /**
     * Waits for end-of-output after the command exited. A background process that keeps the
     * pipe open would hold it forever: stop waiting once no byte arrived for {@code grace}, counted
     * from this call at the earliest. A remote command's last bytes may come after its exit status
     * (OpenSSH sends exit-status, then what is still in the command's pipe), and a command that was
     * silent before its exit must not lose them.
     */
    public boolean finish(Duration grace) throws InterruptedException {
        long exited = System.nanoTime();
        while (!end.await(50, TimeUnit.MILLISECONDS)) {
            if (!writing && System.nanoTime() - Math.max(lastActivity, exited) > grace.toNanos()) {
                detached = true;
                end.await(50, TimeUnit.MILLISECONDS); // let an in-flight write finish
                return false;
            }
        }
        return true;
    }

    /**
     * Stops writing into the sink (what still comes is drained and discarded) and returns once no
     * write is in flight: the sink then holds its final bytes. Only for a sink that never blocks
     * (a capture): it waits for the chunk being written.
     */
    public void detach() {
        detached = true;
        synchronized (sinkLock) {
            // a chunk being written when the flag was set is in the sink now
        }
    }

    /** Whether end-of-output came (or the read failed): this pump holds no thread any more. */
    public boolean ended() {
        return end.getCount() == 0;
    }

    /** The caller's sink failed with this (the pump kept draining so the command never blocked). */
    public IOException failure() {
        return failure;
    }
}
