package dev.airlock.spi;

import dev.airlock.BackendException;
import dev.airlock.CapturedOutput;
import dev.airlock.ExecRequest;
import dev.airlock.Payload;
import dev.airlock.internal.LaunchRecordStream;
import dev.airlock.internal.OutputCapture;
import dev.airlock.internal.OutputPump;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One launched exec's streams: stdout through the launcher record's parser into a capture or the
 * caller's sink, stderr likewise, and stdin from the caller's payload. After the command ends,
 * {@link #finish} waits for end-of-output up to the output grace, then lets go of the transport.
 */
final class Capture {
    private static final Logger LOG = LoggerFactory.getLogger(Capture.class);
    private static final int HEAP_CAPTURE = 1 << 20;
    private static final int CHUNK = 64 * 1024;

    private final AbstractEnvironment env;
    private final ExecRequest request;
    private final RemoteProcess process;
    private final LaunchRecordStream records;
    private final OutputCapture outCap;
    private final OutputCapture errCap;
    private final OutputPump outPump;
    private final OutputPump errPump;
    private StdinWriter writer;

    Capture(AbstractEnvironment env, ExecRequest request, RemoteProcess process, String nonce) {
        this.env = env;
        this.request = request;
        this.process = process;
        long cap = request.captureLimit() >= 0 ? request.captureLimit() : env.outputCap();
        this.outCap = request.stdoutSink().isPresent() ? null : new OutputCapture(cap, HEAP_CAPTURE, env.spills()::newFile);
        this.errCap = request.stderrSink().isPresent() ? null : new OutputCapture(cap, HEAP_CAPTURE, env.spills()::newFile);
        this.records = new LaunchRecordStream(process.stdout(), nonce);
        this.outPump = new OutputPump(records, outCap != null ? outCap : request.stdoutSink().get());
        this.errPump = new OutputPump(process.stderr(), errCap != null ? errCap : request.stderrSink().get());
    }

    void start() {
        env.runAsync(outPump);
        env.runAsync(errPump);
    }

    void writeStdin(Runnable onSourceFailure) {
        writer = new StdinWriter(process.stdin(), request.stdin().orElseThrow(), onSourceFailure);
        env.runAsync(writer);
    }

    /**
     * After the command ended: waits for both outputs (a background job holding a pipe is given
     * up on after the output grace, and its transport released so no thread stays blocked on it),
     * closes the captures and flushes the caller's sinks. Returns whether the launcher record came.
     */
    boolean finish(ExecRun run) throws InterruptedException {
        boolean drained = outPump.finish(env.outputGrace()) & errPump.finish(env.outputGrace());
        run.recorded(records.record());
        if (!drained || process.hasSurvivors()) {
            env.linger(process, run.knownIdentity());
        }
        if (writer != null) {
            writer.awaitEnd();
        }
        AbstractEnvironment.closeQuietly(outCap);
        AbstractEnvironment.closeQuietly(errCap);
        flushQuietly(request.stdoutSink());
        flushQuietly(request.stderrSink());
        process.release();
        return records.seen();
    }

    /** The launcher record, waiting for it up to {@code max} (it comes before the command runs). */
    LaunchRecordStream.Record awaitRecord(java.time.Duration max) throws InterruptedException {
        return records.awaitRecord(max);
    }

    /** Failures of the caller's payload or sinks, or of the capture itself, become the exec's error. */
    void throwFailures(boolean stopped) {
        if (writer != null && writer.failure != null) {
            throw new BackendException("reading the stdin payload failed, so the command was killed: "
                    + writer.failure.getMessage(), writer.failure);
        }
        for (OutputPump d : new OutputPump[] {outPump, errPump}) {
            if (d.failure() != null && !stopped) {
                String where = (d == outPump ? outCap : errCap) == null ? " to the caller's stream" : " to its capture";
                throw new BackendException("writing the command's " + (d == outPump ? "stdout" : "stderr") + where
                        + " failed: " + d.failure().getMessage(), d.failure());
            }
        }
    }

    CapturedOutput stdout() {
        return deliver(outCap);
    }

    CapturedOutput stderr() {
        return deliver(errCap);
    }

    private CapturedOutput deliver(OutputCapture c) {
        if (c == null) {
            return CapturedOutput.empty();
        }
        if (c.spillPath() != null) {
            env.spills().delivered(c.spillPath());
        }
        return c.result();
    }

    /** The first line of captured stderr, for a staging error's message. */
    String stderrLine() {
        if (errCap == null) {
            return "";
        }
        byte[] b;
        try (InputStream in = errCap.result().open()) {
            b = in.readNBytes(512);
        } catch (IOException | RuntimeException e) {
            return "";
        }
        String s = new String(b, StandardCharsets.UTF_8).strip();
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    private static void flushQuietly(Optional<OutputStream> sink) {
        sink.ifPresent(s -> {
            try {
                s.flush();
            } catch (IOException | RuntimeException ignored) {
                // the caller's sink; its own errors surface on its next write
            }
        });
    }

    /** Streams the caller's payload into the command's stdin, then closes it (end-of-input). */
    private static final class StdinWriter implements Runnable {
        private final OutputStream to;
        private final Payload payload;
        private final Runnable onSourceFailure;
        private final CountDownLatch end = new CountDownLatch(1);
        private volatile boolean readingSource;
        volatile IOException failure;

        StdinWriter(OutputStream to, Payload payload, Runnable onSourceFailure) {
            this.to = to;
            this.payload = payload;
            this.onSourceFailure = onSourceFailure;
        }

        @Override
        public void run() {
            byte[] buf = new byte[CHUNK];
            try (InputStream in = payload.open()) {
                int n;
                while ((n = readSource(in, buf)) >= 0) {
                    to.write(buf, 0, n);
                    to.flush(); // a live source (a pipe, a terminal) must not wait in a buffer for more input
                }
                to.flush();
            } catch (SourceFailure e) {
                // The caller's payload broke: the command must not take a short input for the
                // whole, so it is killed before it can see end-of-input.
                failure = (IOException) e.getCause();
                onSourceFailure.run();
            } catch (IOException | RuntimeException e) {
                // The command exited without reading all of its input, like a pipeline's SIGPIPE.
                LOG.debug("stdin not fully delivered: {}", e.getMessage());
            } finally {
                AbstractEnvironment.closeQuietly(to);
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
         * Called after the command exited. A writer blocked reading the caller's source (an idle
         * pipe that is never closed, like an agent's stdin) would never end: the input has nowhere
         * to go any more, so do not wait for it.
         */
        void awaitEnd() throws InterruptedException {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!end.await(10, TimeUnit.MILLISECONDS)) {
                if (readingSource || System.nanoTime() > until) {
                    return;
                }
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
