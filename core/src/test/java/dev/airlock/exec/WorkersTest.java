package dev.airlock.exec;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An environment's threads: a full pool still runs what must run (a kill, a pump) on a thread of
 * its own; after shutdown a scheduled task runs at once and an alarm never; no thread keeps the
 * JVM alive. And the spill files no result took are deleted.
 */
class WorkersTest {
    private static final long WAIT_S = 30;

    @Test
    void aFullPoolStillRunsATaskOnAThreadOfItsOwn() throws Exception {
        Workers w = new Workers("full");
        CountDownLatch release = new CountDownLatch(1);
        try {
            int filled = 0;
            while (w.tryExecute(() -> await(release))) {
                filled++;
                assertTrue(filled <= LiveExecs.MAX_LIVE * 5 + Workers.SPARE, "the pool is bounded");
            }
            CountDownLatch ran = new CountDownLatch(1);
            AtomicReference<Thread> on = new AtomicReference<>();
            w.runAsync(() -> {
                on.set(Thread.currentThread());
                ran.countDown();
            });
            assertTrue(ran.await(WAIT_S, TimeUnit.SECONDS), "a task given to a full pool never ran");
            assertTrue(on.get().getName().endsWith("-extra") && on.get().isDaemon(), on.get().getName());
        } finally {
            release.countDown();
            w.shutdown();
        }
    }

    @Test
    void poolThreadsAreDaemonsNamedForTheirEnvironment() throws Exception {
        Workers w = new Workers("named");
        try {
            AtomicReference<Thread> on = new AtomicReference<>();
            CountDownLatch ran = new CountDownLatch(1);
            assertTrue(w.tryExecute(() -> {
                on.set(Thread.currentThread());
                ran.countDown();
            }));
            assertTrue(ran.await(WAIT_S, TimeUnit.SECONDS));
            assertTrue(on.get().isDaemon(), "a pool thread must not keep the JVM alive");
            assertTrue(on.get().getName().startsWith("airlock-named#") && on.get().getName().startsWith(w.threadPrefix()), on.get().getName());
        } finally {
            w.shutdown();
        }
    }

    @Test
    void aScheduledTaskRunsAfterItsDelayAndAtOnceAfterShutdown() throws Exception {
        Workers w = new Workers("sched");
        CountDownLatch ran = new CountDownLatch(1);
        ScheduledFuture<?> f = w.schedule(ran::countDown, Duration.ofMillis(50));
        assertNotNull(f);
        assertTrue(ran.await(WAIT_S, TimeUnit.SECONDS), "a scheduled task never ran");
        w.shutdown();
        CountDownLatch late = new CountDownLatch(1);
        assertNull(w.schedule(late::countDown, Duration.ofHours(1)), "nothing to cancel after shutdown");
        assertTrue(late.await(WAIT_S, TimeUnit.SECONDS), "after shutdown a scheduled task (a kill) runs at once");
    }

    @Test
    void anAlarmFiresOnTimeAndNeverAfterShutdown() throws Exception {
        Workers w = new Workers("alarm");
        CountDownLatch fired = new CountDownLatch(1);
        assertNotNull(w.alarm(fired::countDown, Duration.ofMillis(20)));
        assertTrue(fired.await(WAIT_S, TimeUnit.SECONDS), "an alarm never fired");
        ScheduledFuture<?> cancelled = w.alarm(() -> { }, Duration.ofHours(1));
        assertNotNull(cancelled);
        assertTrue(cancelled.cancel(false), "an alarm can be cancelled before it fires");
        w.shutdown();
        AtomicBoolean late = new AtomicBoolean();
        assertNull(w.alarm(() -> late.set(true), Duration.ZERO), "no alarm after shutdown");
        Thread.sleep(100);
        assertFalse(late.get(), "an alarm after shutdown must never fire");
    }

    @Test
    void spillFilesNoResultTookAreDeletedAndADeliveredOneIsKept() throws Exception {
        Spills spills = new Spills();
        Path kept = spills.newFile();
        Path dropped = spills.newFile();
        assertTrue(Files.exists(kept) && Files.exists(dropped));
        spills.delivered(kept);
        spills.deletePending();
        assertFalse(Files.exists(dropped), "a spill file no result took must go at close");
        assertTrue(Files.exists(kept), "a result owns its spill file");
        Files.delete(kept);
    }

    private static void await(CountDownLatch l) {
        try {
            l.await(WAIT_S, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
