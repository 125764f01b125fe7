package dev.airlock.tck;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Races for lifecycle tests: the same call from many threads released at one instant. */
public final class Races {
    private Races() {
    }

    /**
     * Runs {@code call} on {@code threads} threads that all wait at one gate and start together,
     * and waits for every one; the first failure is rethrown.
     */
    public static void atOnce(int threads, Callable<?> call) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                done.add(pool.submit(() -> {
                    go.await();
                    return call.call();
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
