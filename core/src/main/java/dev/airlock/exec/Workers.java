package dev.airlock.exec;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An environment's threads: a bounded pool for flows, pumps, stdin writers and kills, and one timer.
 * What must run for a command that runs (a pump, a kill, a clean-up) gets a thread of its own when
 * the pool is full or shut down.
 */
final class Workers {
    /** Numbers the environments of this JVM, so a thread dump tells two environments of one backend apart. */
    private static final AtomicInteger ENVIRONMENTS = new AtomicInteger();

    /** {@code airlock-NAME#K-}: what this environment's thread names start with. */
    private final String threadPrefix;
    private final ExecutorService pool;
    private final ScheduledExecutorService timers;

    /** Threads beyond the live execs' needs (see the constructor). */
    static final int SPARE = 16;

    Workers(String name) {
        this.threadPrefix = "airlock-" + name + "#" + ENVIRONMENTS.incrementAndGet() + "-";
        AtomicInteger n = new AtomicInteger();
        ThreadFactory tf = r -> {
            Thread t = new Thread(r, threadPrefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        // Bounded: at most MAX_LIVE execs run at once, each needing a few threads (flow, two pumps,
        // stdin, kill); beyond those, SPARE for the pumps of finished execs whose output a process
        // out of the kill's reach (a second session, without isolation) still holds.
        this.pool = new ThreadPoolExecutor(0, LiveExecs.MAX_LIVE * 5 + SPARE, 30, TimeUnit.SECONDS,
                new SynchronousQueue<>(), tf);
        this.timers = Executors.newSingleThreadScheduledExecutor(tf);
    }

    /** What the names of this environment's threads start with, and no other environment's. */
    String threadPrefix() {
        return threadPrefix;
    }

    /** Runs {@code task} on the pool; false when no thread is free (or the pool is shut down). */
    boolean tryExecute(Runnable task) {
        try {
            pool.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** Runs {@code task} on the pool, or on a thread of its own when the pool cannot take it. */
    void runAsync(Runnable task) {
        if (!tryExecute(task)) {
            Thread t = new Thread(task, threadPrefix + "extra");
            t.setDaemon(true);
            t.start();
        }
    }

    /** Runs {@code task} on a worker after {@code delay}; the timer thread itself never blocks. */
    ScheduledFuture<?> schedule(Runnable task, Duration delay) {
        try {
            return timers.schedule(() -> runAsync(task), delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            runAsync(task); // closed: run it now
            return null;
        }
    }

    /**
     * Runs {@code task} on the timer thread itself after {@code delay} (it must not block); null and
     * never run when the environment is closed (an alarm that fired at once would be wrong).
     */
    ScheduledFuture<?> alarm(Runnable task, Duration delay) {
        try {
            return timers.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /**
     * Runs each task as {@link #runAsync} does: on the pool, or on a thread of its own when the pool
     * is full or shut down (a pump run inline could deadlock on a full pipe; a kill at close must run).
     */
    Executor executor() {
        return this::runAsync;
    }

    /**
     * Not shutdownNow: a kill or clean-up still running (a command launched while close ran) must
     * finish; stuck flows were interrupted at their deadlines already.
     */
    void shutdown() {
        pool.shutdown();
        timers.shutdownNow();
    }
}
