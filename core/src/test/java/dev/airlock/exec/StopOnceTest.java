package dev.airlock.exec;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StopOnceTest {
    @Test
    void manyRacersStopOnceAndLateCallersWaitForTheEnd() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        StopOnce once = new StopOnce(() -> {
            runs.incrementAndGet();
            inside.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        List<Thread> threads = new ArrayList<>();
        AtomicInteger returnedEarly = new AtomicInteger();
        AtomicInteger ranIt = new AtomicInteger();
        assertFalse(once.isStopped(), "stopped before anyone stopped it");
        for (int i = 0; i < 8; i++) {
            Thread t = new Thread(() -> {
                if (once.stop()) {
                    ranIt.incrementAndGet();
                }
                if (release.getCount() > 0) {
                    returnedEarly.incrementAndGet();
                }
            });
            threads.add(t);
            t.start();
        }
        inside.await();
        Thread.sleep(50);
        release.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(1, runs.get());
        assertEquals(1, ranIt.get(), "exactly one caller is told it ran the stop");
        assertFalse(once.stop(), "a caller after the end did not run it");
        assertEquals(0, returnedEarly.get(), "a caller returned before the stop finished");
        assertTrue(once.isStopped());
    }

    /** A late caller interrupted while it waits (a shutdown hook, say) still waits for the end, and keeps its interrupt. */
    @Test
    void anInterruptedLateCallerStillWaitsForTheEndAndKeepsItsInterrupt() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        StopOnce once = new StopOnce(() -> {
            inside.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Thread first = new Thread(once::stop);
        first.start();
        inside.await();
        AtomicBoolean returnedEarly = new AtomicBoolean();
        AtomicBoolean keptInterrupt = new AtomicBoolean();
        Thread late = new Thread(() -> {
            once.stop();
            returnedEarly.set(release.getCount() > 0);
            keptInterrupt.set(Thread.currentThread().isInterrupted());
        });
        late.start();
        Thread.sleep(50);
        late.interrupt();
        Thread.sleep(100);
        assertTrue(late.isAlive(), "an interrupt made a late caller return before the stop finished");
        release.countDown();
        late.join(10_000);
        first.join(10_000);
        assertFalse(returnedEarly.get());
        assertTrue(keptInterrupt.get(), "the late caller's interrupt was swallowed");
    }
}
