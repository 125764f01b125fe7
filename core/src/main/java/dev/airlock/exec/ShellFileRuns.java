package dev.airlock.exec;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.NoSuchPathException;
import dev.airlock.Payload;
import dev.airlock.spi.BlockingPipe;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The internal execs behind {@link ShellFiles}: one run with small captured outputs, or one whose
 * stdout (after a one-byte header that says the operation started) becomes the caller's stream.
 */
final class ShellFileRuns {
    private static final int PIPE_BUFFER = 256 * 1024;
    /** What a streaming script prints first, once it found its file: no header means it failed. */
    static final byte HEADER = 'A';

    private final CoreEnvironment env;

    ShellFileRuns(CoreEnvironment env) {
        this.env = env;
    }

    /** What an internal exec of a file operation gave: its exit status, stdout and first stderr lines. */
    record Outcome(int exit, String out, String err) {
    }

    Outcome run(String script, Payload stdin) {
        ByteArrayOutputStream out = new CappedBuffer(16 << 20);
        ByteArrayOutputStream err = new CappedBuffer(64 << 10);
        Execution e = env.startInternal(script, stdin, out, err);
        ExecResult r;
        try {
            r = e.await();
        } catch (InterruptedException ie) {
            e.cancel();
            Thread.currentThread().interrupt();
            throw new BackendException("interrupted during a file operation; it was cancelled");
        }
        if (r.cancelled()) {
            throw new BackendException("the file operation was cancelled");
        }
        return new Outcome(r.exitCode(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8).strip());
    }

    /** An exec whose stdout (after a one-byte header) becomes the caller's stream. */
    InputStream streamed(String op, String path, String script) {
        BlockingPipe pipe = new BlockingPipe(PIPE_BUFFER);
        ByteArrayOutputStream err = new CappedBuffer(64 << 10);
        Execution e = env.startInternal(script, null, pipe.sink, err);
        InputStream in = pipe.source(e::cancel);
        env.workers().runAsync(() -> {
            // Ends the stream when the exec ends: with EOF on success, an error otherwise.
            try {
                ExecResult r = e.await();
                if (r.exitCode() != 0 && !pipe.isReaderClosed()) {
                    pipe.fail(new IOException(failure(op, path, outcome(r, err)).getMessage()));
                } else {
                    pipe.end();
                }
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                pipe.fail(new IOException(op + " interrupted"));
            } catch (AirlockException ae) {
                pipe.fail(new IOException(ae.getMessage(), ae));
            }
        });
        int first;
        try {
            first = in.read();
        } catch (IOException io) {
            first = -1; // the exec ended before the header; its exit code says why
        }
        if (first != HEADER) {
            try {
                in.close();
            } catch (IOException ignored) {
                // our own pipe's close cannot fail
            }
            Outcome o = outcome(awaitQuietly(e), err);
            if (o.exit() == 2) {
                throw new NoSuchPathException(path);
            }
            throw failure(op, path, o);
        }
        return in;
    }

    private static Outcome outcome(ExecResult r, ByteArrayOutputStream err) {
        return new Outcome(r == null ? -1 : r.exitCode(), "", err.toString(StandardCharsets.UTF_8).strip());
    }

    private static ExecResult awaitQuietly(Execution e) {
        try {
            return e.await();
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            return null;
        } catch (AirlockException ae) {
            return null;
        }
    }

    BackendException failure(String op, String path, Outcome o) {
        String why = o.err().isEmpty() ? "exit " + o.exit() : o.err().lines().findFirst().orElse("");
        return new BackendException(op + " " + path + " failed on " + env.name() + ": " + why);
    }

    /** Keeps the first {@code cap} bytes; more is dropped (these are small internal outputs). */
    private static final class CappedBuffer extends ByteArrayOutputStream {
        private final int cap;

        CappedBuffer(int cap) {
            this.cap = cap;
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            int keep = Math.max(0, Math.min(len, cap - count));
            super.write(b, off, keep);
        }

        @Override
        public synchronized void write(int b) {
            if (count < cap) {
                super.write(b);
            }
        }
    }
}
