package dev.airlock.exec;

import dev.airlock.spi.RemoteProcess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One exec's kill: the request (which may come before launch returned), the one kill of its tree,
 * and who was launched (the backend's process group, or the launcher record's). A request before
 * the process is known is carried out by {@link #launched} as soon as it is.
 */
final class TreeKill {
    private static final Logger LOG = LoggerFactory.getLogger(TreeKill.class);

    private final CoreEnvironment env;
    private volatile RemoteProcess process;
    private volatile Capture capture;
    private volatile Reaper.Identity identity;
    private volatile boolean requested;
    private volatile boolean exited;
    private volatile boolean lost;
    private final String nonce;
    private CompletableFuture<Void> kill;

    /** {@code nonce}: the exec's launcher nonce, which finds its group when the record never came. */
    TreeKill(CoreEnvironment env, String nonce) {
        this.env = env;
        this.nonce = nonce;
    }

    /** The command runs: a kill requested while launch ran is carried out now. */
    void launched(RemoteProcess p, Capture c) {
        capture = c;
        process = p;
        if (requested) {
            request();
        }
    }

    /** Kills the tree once; when launch has not returned yet, {@link #launched} does it as soon as it does. */
    void request() {
        requested = true;
        RemoteProcess p = process;
        if (p == null) {
            return; // launched() reads requested right after setting process
        }
        CompletableFuture<Void> k;
        synchronized (this) {
            if (kill != null) {
                return;
            }
            kill = k = new CompletableFuture<>();
        }
        env.workers().runAsync(() -> {
            try {
                kill(p);
            } finally {
                k.complete(null);
            }
        });
    }

    /**
     * Finds who was launched, keeps the tree for close until its kill got through (the flow that
     * would have found it lingering after capture may have been let go at the stop bound), and
     * kills it.
     */
    private void kill(RemoteProcess p) {
        Reaper.Identity id = identity;
        long began = System.nanoTime();
        if (id == null) {
            // The record names the group when the backend cannot; it comes before the command runs.
            Capture c = capture;
            Duration wait = p.processGroup().isPresent() ? Duration.ZERO : env.config().stopBound();
            try {
                id = identityOf(c == null ? null : c.awaitRecord(wait));
            } catch (InterruptedException e) {
                id = identityOf(null); // not ours to end the kill: the backend's group, if it named one
            }
            if (id == null && (lost || !env.hooks().killsWithoutGroup())) {
                // The connection died before the record reached us (the command had just
                // started), or the record is late and the backend's kill needs the group: look
                // the group up by the nonce (over a fresh connection when the old one died).
                id = env.reaper().find(nonce, Reaper.LOST_REACH);
            }
            identity = id;
        }
        boolean kept = id != null || env.hooks().killsWithoutGroup();
        if (kept) {
            env.linger(p, id);
        }
        // One budget for the lookup and the signals together: the kill's wait stays bounded.
        Duration left = Reaper.LOST_REACH.minusNanos(System.nanoTime() - began);
        if (env.reaper().terminate(p, id, () -> exited, lost && !left.isNegative() ? left : Duration.ZERO) && kept) {
            env.unlinger(p);
        }
    }

    /** Runs {@code then} once the kill is done (at once when none was started). */
    void whenDone(Runnable then) {
        CompletableFuture<Void> k;
        synchronized (this) {
            k = kill;
        }
        if (k == null) {
            then.run();
        } else {
            k.whenComplete((v, e) -> then.run());
        }
    }

    /** The most {@link #await} waits for the kill (its hooks and retries are bounded within it). */
    Duration bound() {
        return env.config().stopBound().plusSeconds(30);
    }

    /** No process of a killed exec outlives its result (bounded: the watchdog answers the caller anyway). */
    void await() throws InterruptedException {
        CompletableFuture<Void> k;
        synchronized (this) {
            k = kill;
        }
        if (k == null) {
            return;
        }
        try {
            k.get(bound().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("killing a command on {} did not finish: {}", env.name(), e.toString());
        }
    }

    void exited() {
        exited = true;
    }

    /**
     * The transport died, not the command: it still runs, so the kill must not take the end for
     * the shell's exit, and it keeps trying to reach the target (bounded) instead of once.
     * Call before {@link #request}.
     */
    void lost() {
        lost = true;
    }

    /** The launcher record arrived (or did not: null); remembers who was launched. */
    void recorded(LaunchRecordStream.Record record) {
        if (identity == null) {
            identity = identityOf(record);
        }
    }

    /** Who was launched, as far as known now; null when neither the backend nor the record said. */
    Reaper.Identity known() {
        return identity;
    }

    /** The backend's own group and start time, completed from the launcher record. */
    private Reaper.Identity identityOf(LaunchRecordStream.Record record) {
        RemoteProcess p = process;
        OptionalLong pgid = p.processGroup();
        if (pgid.isEmpty() && record != null) {
            pgid = OptionalLong.of(record.pid());
        }
        if (pgid.isEmpty()) {
            return null;
        }
        OptionalLong start = p.startTime();
        if (start.isEmpty() && record != null && record.pid() == pgid.getAsLong()) {
            start = record.startTime();
        }
        return new Reaper.Identity(pgid.getAsLong(), start);
    }
}
