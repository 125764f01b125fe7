package dev.airlock.exec;

import dev.airlock.AirlockException;
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
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Airlock's own small scripts (the probe, staging, removal, group reads and kills), run straight
 * through the backend's launch without the state machine.
 *
 * <p>Each script first prints a start line of its own; what came before it on stdout is dropped.
 * A remote login shell runs the user's startup files before our {@code sh}, and a {@code ~/.bashrc}
 * that prints without an interactive guard would otherwise lead every script's output: the probe
 * would find no facts, and a group check reading {@code Welcome\nalive 4242} would call a live
 * group gone and skip its KILL. (A command's own output has the launcher record for that.)
 */
final class RawRuns {
    private static final int NO_STATUS = RemoteProcess.NO_STATUS;
    private static final String START = "@airlock-raw:";

    private static final java.security.SecureRandom RANDOM = dev.airlock.shell.KernelRandom.create();

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
        String mark = START + Long.toHexString(RANDOM.nextLong() | 1L << 62);
        String marked = "printf '%s\\n' '" + mark + "'\n" + script;
        RemoteProcess p = env.hooks().launch(new Launch("sh", marked, Map.of(), nativeEnv ? env.childUnset() : Set.of(), stdin != null, true));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CompletableFuture<Void> e = CompletableFuture.runAsync(() -> copyCapped(p.stderr(), err), env.workers().executor());
        CompletableFuture<Void> o = CompletableFuture.runAsync(() -> copyCapped(p.stdout(), out), env.workers().executor());
        IOException writeFailure = null;
        java.util.Optional<dev.airlock.spi.StdinWriter> streamed = env.streamedStdin();
        if (stdin != null && streamed.isPresent()) {
            // A failure ends the input where it stands (the script must not wait for ever); the
            // failure is reported below, so a short upload is refused, never used.
            StdinPump[] pump = new StdinPump[1];
            pump[0] = StdinPump.streamed(streamed.get(), p, stdin, () -> pump[0].endQuietly());
            pump[0].run();
            writeFailure = pump[0].failure() != null ? pump[0].failure() : pump[0].transportFailure();
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
            Optional<AirlockException> why = p.lostReason();
            if (why.isPresent()) {
                throw why.get(); // the sandbox ended: the backend's own line, not a lost connection
            }
            throw new IOException("the connection to " + env.destination() + " was lost while an internal script ran");
        }
        if (writeFailure != null && exit == 0) {
            throw new IOException("delivering input failed: " + writeFailure.getMessage(), writeFailure);
        }
        return new RawResult(exit, afterStartLine(out.toByteArray(), mark), err.toByteArray());
    }

    /**
     * The script's own output: what follows its start line (found anywhere: noise may lack a final
     * newline, and the line holds a random token). Without the line (the shell never ran the
     * script), everything, so the caller still sees what there is.
     */
    static byte[] afterStartLine(byte[] out, String mark) {
        byte[] line = (mark + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        outer:
        for (int i = 0; i <= out.length - line.length; i++) {
            for (int j = 0; j < line.length; j++) {
                if (out[i + j] != line[j]) {
                    continue outer;
                }
            }
            return java.util.Arrays.copyOfRange(out, i + line.length, out.length);
        }
        return out;
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
