package dev.airlock.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * N commands started at the same instant, each timed on its own: rounds of Airlock and of the
 * reference alternate, and every command's latency is one sample (p50, p99 over all of them).
 */
final class Concurrency {
    private Concurrency() {
    }

    /** Adds {1, 8, 64} to {airlock p50, reference p50} into {@code growth}; returns the samples at the largest N. */
    static Sample[] measure(String label, Side airlock, Side reference, Plan plan, Map<String, Map<Integer, double[]>> growth) {
        Map<Integer, double[]> g = growth.computeIfAbsent(label, k -> new LinkedHashMap<>());
        Sample[] last = null;
        for (int n : plan.concurrency()) {
            Progress.say(label + " x" + n);
            Sample a = new Sample();
            Sample r = new Sample();
            ExecutorService pool = Executors.newFixedThreadPool(n);
            try {
                round(pool, n, airlock, null); // warm-up
                round(pool, n, reference, null);
                for (int i = 0; i < plan.rounds(n); i++) {
                    if (i % 2 == 0) {
                        round(pool, n, airlock, a);
                        round(pool, n, reference, r);
                    } else {
                        round(pool, n, reference, r);
                        round(pool, n, airlock, a);
                    }
                }
            } finally {
                pool.shutdownNow();
            }
            g.put(n, new double[] {a.median(), r.median()});
            last = new Sample[] {a, r};
        }
        return last;
    }

    /**
     * N commands at once on one side alone, where there is nothing to alternate with (an emulator's
     * exec latency): a warm-up round, then {@code rounds} rounds; every command's latency is one sample.
     */
    static Sample alone(String label, Side side, int n, int rounds) {
        Progress.say(label + " x" + n);
        Sample a = new Sample();
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            round(pool, n, side, null);
            for (int i = 0; i < rounds; i++) {
                round(pool, n, side, a);
            }
        } finally {
            pool.shutdownNow();
        }
        return a;
    }

    private static void round(ExecutorService pool, int n, Side side, Sample into) {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> fs = new ArrayList<>();
        Memory.reset();
        for (int i = 0; i < n; i++) {
            fs.add(pool.submit(() -> {
                go.await();
                long t0 = System.nanoTime();
                try {
                    side.run();
                } catch (Exception | Error e) {
                    if (into != null) {
                        into.failed(e);
                    }
                    return null;
                }
                if (into != null) {
                    into.add((System.nanoTime() - t0) / 1e9);
                }
                return null;
            }));
        }
        go.countDown();
        for (Future<?> f : fs) {
            try {
                f.get();
            } catch (Exception e) {
                if (into != null) {
                    into.failed(e);
                }
            }
        }
        if (into != null) {
            into.memory(Memory.heapPeak(), Memory.rssPeak());
        }
    }
}
