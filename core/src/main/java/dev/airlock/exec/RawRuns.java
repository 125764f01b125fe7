package dev.airlock.exec;

import dev.airlock.spi.RawResult;
import dev.airlock.spi.Launch;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.Payload;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Airlock's own small scripts (the probe, staging, removal, group reads and kills), run straight
 * through the backend's launch without the state machine.
 */
final class RawRuns {
    private static final int NO_STATUS = RemoteProcess.NO_STATUS;

    private final CoreEnvironment env;

    RawRuns(CoreEnvironment env) {
        this.env = env;
    }

    /**
     * Runs a small internal {@code sh} script directly through {@link dev.airlock.spi.Backend#launch}, streaming
     * {@code stdin} if given. For the probe, staging, removal and kill; output is capped at 1 MiB.
     */
    RawResult run(String script, Payload stdin) throws IOException {
        boolean nativeEnv = env.capabilities().nativeEnv();
        RemoteProcess p = env.hooks().launch(new Launch("sh", script, Map.of(), nativeEnv ? env.childUnset() : Set.of(), stdin != null, true));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CompletableFuture<Void> e = CompletableFuture.runAsync(() -> copyCapped(p.stderr(), err), env.workers().executor());
        CompletableFuture<Void> o = CompletableFuture.runAsync(() -> copyCapped(p.stdout(), out), env.workers().executor());
        IOException writeFailure = null;
        java.util.Optional<dev.airlock.spi.StdinWriter> streamed = env.streamedStdin();
        if (stdin != null && streamed.isPresent()) {
            StdinPump pump = StdinPump.streamed(streamed.get(), p, stdin, () -> { });
            pump.run();
            writeFailure = pump.failure();
        } else {
            try (OutputStream in = p.stdin()) {
                if (stdin != null) {
                    try (InputStream src = stdin.open()) {
                        src.transferTo(in);
                    } catch (IOException ex) {
                        writeFailure = ex;
                    }
                }
            } catch (IOException ignored) {
                // closing stdin of a command that already exited
            }
        }
        int exit;
        try {
            exit = p.waitFor();
            o.get(30, TimeUnit.SECONDS);
            e.get(30, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            // Give the script a moment to end, so what it writes (a staged file) is not created
            // after the caller went on to remove it.
            awaitEndUninterruptibly(p, Duration.ofSeconds(1));
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while running an internal script");
        } catch (ExecutionException | TimeoutException ex) {
            throw new IOException("reading an internal script's output failed: " + ex.getMessage(), ex);
        } finally {
            p.release();
        }
        if (exit == NO_STATUS) {
            throw new IOException("the connection to " + env.name() + " was lost while an internal script ran");
        }
        if (writeFailure != null && exit == 0) {
            throw new IOException("delivering input failed: " + writeFailure.getMessage(), writeFailure);
        }
        return new RawResult(exit, out.toByteArray(), err.toByteArray());
    }

    private static void awaitEndUninterruptibly(RemoteProcess p, Duration max) {
        CompletableFuture<Void> end = CompletableFuture.runAsync(() -> {
            try {
                p.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, r -> {
            Thread t = new Thread(r, "airlock-raw-end");
            t.setDaemon(true);
            t.start();
        });
        long until = System.nanoTime() + max.toNanos();
        while (!end.isDone() && System.nanoTime() < until) {
            try {
                end.get(until - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                continue; // restored by the caller
            } catch (ExecutionException | TimeoutException e) {
                return;
            }
        }
    }

    private static void copyCapped(InputStream in, ByteArrayOutputStream out) {
        byte[] buf = new byte[8192];
        try {
            int n;
            while ((n = in.read(buf)) >= 0) {
                if (out.size() < (1 << 20)) {
                    out.write(buf, 0, Math.min(n, (1 << 20) - out.size()));
                }
            }
        } catch (IOException ignored) {
            // the process ended; what was read is what there is
        }
    }
}
