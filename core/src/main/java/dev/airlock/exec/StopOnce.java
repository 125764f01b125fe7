package dev.airlock.exec;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs a stop action exactly once however many threads race to call it ({@code close()} and every
 * cancel path share one). Callers after the first wait until the stop has finished.
 */
public final class StopOnce {
    private final AtomicBoolean claimed = new AtomicBoolean();
    private final CountDownLatch finished = new CountDownLatch(1);
    private final Runnable action;

    public StopOnce(Runnable action) {
        this.action = action;
    }

    /** Returns true for the one caller that ran the action. */
    public boolean stop() {
        if (!claimed.compareAndSet(false, true)) {
            awaitQuietly();
            return false;
        }
        try {
            action.run();
        } finally {
            finished.countDown();
        }
        return true;
    }

    public boolean isStopped() {
        return claimed.get();
    }

    private void awaitQuietly() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    finished.await(60, TimeUnit.SECONDS);
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
