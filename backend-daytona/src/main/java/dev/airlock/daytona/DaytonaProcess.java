package dev.airlock.daytona;

import dev.airlock.AirlockException;
import dev.airlock.spi.BulkInputStream;
import dev.airlock.spi.RemoteProcess;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One command in its own Daytona session, its output through files (the FILES transport): the
 * command runs as {@code ... >OUT 2>ERR}; while it runs the files are followed (progress), and
 * when its exit code is known they are downloaded to the end (streamed into 0600 local spill
 * files, never held in heap) and deleted in the sandbox. The service's logs are never read: they
 * are not byte-exact.
 */
final class DaytonaProcess implements RemoteProcess {
    private static final int KILLED = 128 + 15;
    /** Output is followed live (progress) while a stream is under this size; past it, it comes at the end. */
    private static final long LIVE_MAX = 1 << 20;

    private final DaytonaApi.Toolbox toolbox;
    private final long handle;
    private final String session;
    private final String cmdId;
    private final Tail out;
    private final Tail err;
    private final Runnable onRelease;
    /** Asks the service whether the sandbox has ended: its one line then, else empty. */
    private final java.util.function.Supplier<Optional<AirlockException>> sandboxEnded;
    /** Set when the sandbox ended under this command: what {@link #lostReason} answers. */
    private volatile AirlockException ended;
    private final AtomicBoolean released = new AtomicBoolean();
    private volatile boolean killed;
    private volatile boolean sessionDeleted;
    private Integer exit;

    DaytonaProcess(DaytonaApi.Toolbox toolbox, long handle, String session, String cmdId, String outPath, String errPath,
                   Runnable onRelease, java.util.function.Supplier<Optional<AirlockException>> sandboxEnded) {
        this.toolbox = toolbox;
        this.sandboxEnded = sandboxEnded;
        this.handle = handle;
        this.session = session;
        this.cmdId = cmdId;
        this.out = new Tail(outPath);
        this.err = new Tail(errPath);
        this.onRelease = onRelease;
    }

    /** Stdin never streams on Daytona (the core stages it): writing is refused, closing is fine. */
    @Override
    public OutputStream stdin() {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("Daytona takes stdin staged, not streamed");
            }
        };
    }

    @Override
    public InputStream stdout() {
        return out.reader();
    }

    @Override
    public InputStream stderr() {
        return err.reader();
    }

    @Override
    public synchronized int waitFor() throws InterruptedException {
        if (exit != null) {
            return exit;
        }
        long pause = 20;
        int code;
        try {
            while (true) {
                Optional<Optional<Integer>> s = toolbox.commandStatus(session, cmdId);
                if (s.isEmpty()) { // the session is gone: our kill (or the sandbox's end) took the command
                    code = killed ? KILLED : NO_STATUS;
                    break;
                }
                if (s.get().isPresent()) {
                    code = s.get().get();
                    break;
                }
                Thread.sleep(pause);
                pause = Math.min(500, pause * 3 / 2);
                out.follow(false);
                err.follow(false);
            }
        } catch (AirlockException e) {
            code = NO_STATUS;
        } catch (InterruptedException e) {
            out.finish(null);
            err.finish(null);
            throw e;
        }
        // Output also after a kill or timeout: what the command wrote before it ended is its output.
        boolean whole = out.follow(true) & err.follow(true);
        if (!whole && !killed) {
            // The output could not be downloaded to its end, even resumed: the core drains our streams
            // as best it can, so a short stream with the real exit code would pass for the whole
            // output. Reporting the end as lost makes the exec fail with a typed error instead.
            code = NO_STATUS;
        }
        if (code == NO_STATUS) {
            ended = sandboxEnded.get().orElse(null); // the sandbox's end, not the connection's
        }
        exit = code;
        return code;
    }

    /**
     * The sandbox's ended line when the service said, after this command's end was lost, that the
     * sandbox is gone (stopped, deleted, in error): its end took the command with it.
     */
    @Override
    public Optional<AirlockException> lostReason() {
        return Optional.ofNullable(ended);
    }

    /**
     * Deletes the session, which ends its whole process group (SIGTERM, then SIGKILL from the
     * daemon); the next end of the session counts as our kill, and the core reports the timeout or
     * cancel. Once it succeeded, later calls (the core's SIGKILL round) have nothing left to do.
     */
    void kill() {
        killed = true;
        if (!sessionDeleted) {
            toolbox.deleteSession(session);
            sessionDeleted = true;
        }
    }

    /** Whether the session, and with it every process of the command, still exists as far as we know. */
    boolean sessionAlive() {
        return !sessionDeleted && !released.get();
    }

    /**
     * The exec's session stands for its process group: the core's launcher record names the shell's
     * pid, which leads no group here (the daemon's session does). This local handle lets the core's
     * reaper ask {@link DaytonaBackend#groupState} and {@link DaytonaBackend#kill} about
     * this session; it is never a pid on the target.
     */
    @Override
    public OptionalLong processGroup() {
        return OptionalLong.of(handle);
    }

    @Override
    public void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        out.finish(null);
        err.finish(null);
        out.deleteLocal();
        err.deleteLocal();
        try {
            if (!sessionDeleted) {
                toolbox.deleteSession(session);
                sessionDeleted = true;
            }
        } catch (RuntimeException ignored) {
            // the sandbox may be gone already
        } finally {
            onRelease.run();
        }
    }

    private interface LocalIo<T> {
        T run() throws IOException;
    }

    private static <T> T unchecked(LocalIo<T> io) {
        try {
            return io.run();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * One output file: downloaded (whole, as the toolbox has no ranges) into a 0600 local spill
     * file, appending only the bytes beyond those already there, so a reader can follow it while
     * the command runs and gets every byte exactly once.
     */
    private final class Tail {
        private final String remote;
        private Path local;
        private long delivered;
        private boolean finished;
        private IOException failure;

        Tail(String remote) {
            this.remote = remote;
        }

        /**
         * Downloads the file and appends what is new. A download cut short is made again (the
         * retry rule, see {@link DaytonaApi.Toolbox#download}), skipping what arrived before the
         * cut. Returns false when the last download still could not get the whole file.
         */
        boolean follow(boolean last) {
            synchronized (this) {
                if (finished) {
                    return failure == null;
                }
                if (!last && delivered > LIVE_MAX) {
                    return true;
                }
            }
            IOException failed = null;
            try {
                toolbox.download(remote, this::append);
            } catch (java.io.UncheckedIOException e) {
                failed = e.getCause(); // the local spill file failed
            } catch (RuntimeException e) {
                failed = new IOException(e.getMessage(), e); // the download failed, retries spent
            }
            if (!last) {
                return true; // progress only: the last follow downloads again
            }
            try {
                toolbox.deleteFile(remote);
            } catch (RuntimeException ignored) {
                // removed with the io dir at close at the latest
            }
            finish(failed);
            return failed == null;
        }

        /**
         * Appends the body's bytes beyond those already delivered. An IOException out of here is
         * the body breaking off, never the end of the file: OkHttp's framing tells a cut from the
         * end, and signals a cut at a chunk boundary with an EOFException, so that exception is a
         * cut too (an output file only grows, so it is never shorter than what we have). Failures
         * of the local spill file go out unchecked, so they are not retried.
         */
        private void append(InputStream in) throws IOException {
            long have;
            synchronized (this) {
                have = delivered;
                if (local == null) {
                    local = unchecked(() -> Files.createTempFile("airlock-daytona-", ".out",
                            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))));
                }
            }
            in.skipNBytes(have);
            OutputStream o = unchecked(() -> Files.newOutputStream(local, StandardOpenOption.APPEND));
            try {
                byte[] buf = new byte[64 * 1024];
                int n;
                while ((n = in.read(buf)) >= 0) {
                    int len = n;
                    unchecked(() -> {
                        o.write(buf, 0, len);
                        o.flush();
                        return null;
                    });
                    synchronized (this) {
                        delivered += n;
                        notifyAll();
                    }
                }
            } finally {
                unchecked(() -> {
                    o.close();
                    return null;
                });
            }
        }

        synchronized void finish(IOException e) {
            if (!finished) {
                finished = true;
                failure = e;
            }
            notifyAll();
        }

        synchronized void deleteLocal() {
            if (local != null) {
                try {
                    Files.deleteIfExists(local);
                } catch (IOException ignored) {
                    // a temp file in the JVM's temp dir
                }
            }
        }

        InputStream reader() {
            return new BulkInputStream() {
                private InputStream in;
                private long read;

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (len == 0) {
                        return 0;
                    }
                    while (true) {
                        synchronized (Tail.this) {
                            if (read < delivered) {
                                if (in == null) {
                                    in = Files.newInputStream(local);
                                }
                                int n = in.read(b, off, (int) Math.min(len, delivered - read));
                                if (n > 0) {
                                    read += n;
                                    return n;
                                }
                            } else if (finished) {
                                if (failure != null) {
                                    throw new IOException("downloading the command's output failed: " + failure.getMessage(), failure);
                                }
                                return -1;
                            }
                            try {
                                Tail.this.wait(50);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                throw new InterruptedIOException("interrupted while waiting for the command's output");
                            }
                        }
                    }
                }

                @Override
                public void close() throws IOException {
                    if (in != null) {
                        in.close();
                    }
                }
            };
        }
    }
}
