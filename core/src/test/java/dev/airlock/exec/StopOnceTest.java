package dev.airlock.exec;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
        for (int i = 0; i < 8; i++) {
            Thread t = new Thread(() -> {
                once.stop();
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
        assertEquals(0, returnedEarly.get(), "a caller returned before the stop finished");
        assertTrue(once.isStopped());
    }
}
