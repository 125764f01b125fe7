package dev.airlock.vercel;

import dev.airlock.AirlockException;
import dev.airlock.spi.BulkInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The output file as a stream. While the command runs it is polled (from one {@link #POLL} after
 * the start, so a short command's output is one download) ({@code fs/read} has no
 * offset, so only while it is under {@link #LIVE_MAX}) and new bytes are passed on, so a
 * caller sees progress; once the command ended the rest is read in one download, past the
 * bytes already delivered (a cut download is asked again and resumed). A missing file reads as
 * empty. {@code onEnd} runs once when the stream ended, failed or was closed.
 */
final class OutputFile extends BulkInputStream {
    private static final Logger LOG = LoggerFactory.getLogger(OutputFile.class);

    /** Output is polled live only while it is this small; past it, the rest comes after the exit. */
    static final int LIVE_MAX = 1 << 20;
    private static final Duration POLL = Duration.ofMillis(250);
    /** How often the final read is asked again when its download is cut. */
    private static final int FINAL_READ_RETRIES = 3;

    private final VercelApi api;
    private final String sessionId;
    private final String path;
    private final CompletableFuture<Integer> exit;
    private final Runnable onEnd;
    private InputStream rest;
    private byte[] pending = new byte[0];
    private int pendingOff;
    private long delivered;
    private int retries;
    private boolean ended;
    /** The first live poll waited one {@link #POLL} for the end first. */
    private boolean firstPollDue;
    /** The final read failed for good: the bytes delivered are not the whole file. */
    private volatile boolean cutShort;
    /** What cut it short (the session's end, a 410, reads as such in the process's lost reason). */
    private volatile IOException cutBy;

    OutputFile(VercelApi api, String sessionId, String path, CompletableFuture<Integer> exit, Runnable onEnd) {
        this.api = api;
        this.sessionId = sessionId;
        this.path = path;
        this.exit = exit;
        this.onEnd = onEnd;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        while (true) {
            if (pendingOff < pending.length) {
                int n = Math.min(len, pending.length - pendingOff);
                System.arraycopy(pending, pendingOff, b, off, n);
                pendingOff += n;
                delivered += n;
                return n;
            }
            if (rest != null) {
                int n;
                try {
                    n = rest.read(b, off, len);
                } catch (IOException e) {
                    if (++retries > FINAL_READ_RETRIES) {
                        cutBy = e;
                        cutShort = true;
                        end();
                        throw e;
                    }
                    // fs/read is a read: a cut download is asked again and resumed past what was delivered
                    LOG.debug("reading {} was cut ({}); reading it again from byte {}", path, e.getMessage(), delivered);
                    closeQuietly(rest);
                    rest = null;
                    continue;
                }
                if (n > 0) {
                    delivered += n;
                } else if (n < 0) {
                    end();
                }
                return n;
            }
            if (exit.isDone()) {
                if (exit.isCompletedExceptionally()) {
                    rest = InputStream.nullInputStream(); // the transport died; waitFor says so
                    continue;
                }
                try {
                    rest = download();
                    rest.skipNBytes(delivered);
                } catch (IOException e) {
                    closeQuietly(rest);
                    rest = null;
                    if (++retries > FINAL_READ_RETRIES) {
                        cutBy = e;
                        cutShort = true;
                        end();
                        throw e;
                    }
                }
                continue;
            }
            if (!firstPollDue) {
                // A short command ends within the first poll's wait: its output is then one
                // download, where a poll at the start would be a second one, of nothing yet.
                firstPollDue = true;
                awaitExit();
                continue;
            }
            if (delivered < LIVE_MAX) {
                byte[] head = null;
                try (InputStream in = download()) {
                    head = in.readNBytes(LIVE_MAX);
                } catch (IOException e) {
                    // progress only: a cut poll is polled again, the final read is the one that counts
                    LOG.debug("a progress read of {} failed: {}", path, e.getMessage());
                }
                if (head != null && head.length > delivered) {
                    pending = Arrays.copyOfRange(head, (int) delivered, head.length);
                    pendingOff = 0;
                    continue;
                }
            }
            awaitExit();
        }
    }

    /** Waits up to one {@link #POLL} for the command's end. */
    private void awaitExit() throws InterruptedIOException {
        try {
            exit.get(POLL.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            end(); // its reader gave up: waitFor must not wait for it
            throw new InterruptedIOException("interrupted while the command ran");
        } catch (ExecutionException | TimeoutException e) {
            // polled again, or the end is handled in read
        }
    }

    private InputStream download() throws IOException {
        try {
            return api.read(sessionId, path);
        } catch (AirlockException e) {
            if (VercelApi.status(e) == 404) {
                return InputStream.nullInputStream();
            }
            throw new IOException("cannot read the command's output " + path + ": " + e.getMessage(), e);
        }
    }

    /**
     * Whether the output ended short of the file's end (its download failed, resumes spent). The
     * core drains this stream as best it can and treats its failure as the end, so the process
     * must say so in its end (see the environment's waitFor), or short output would pass for whole.
     */
    boolean cutShort() {
        return cutShort;
    }

    /** The failure that cut the output short, or null. */
    IOException cutBy() {
        return cutBy;
    }

    private void end() {
        if (!ended) {
            ended = true;
            onEnd.run();
        }
    }

    @Override
    public void close() throws IOException {
        end();
        if (rest != null) {
            rest.close();
        }
    }

    private static void closeQuietly(InputStream in) {
        if (in != null) {
            try {
                in.close();
            } catch (IOException ignored) {
                // a cut download
            }
        }
    }
}
