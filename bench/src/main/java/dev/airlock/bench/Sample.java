package dev.airlock.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** The timings (seconds) and memory peaks one side gathered over its repetitions. */
final class Sample {
    private final List<Double> seconds = new ArrayList<>();
    private long heapPeak;
    private long rssPeak;
    private int failures;
    private String lastFailure = "";

    synchronized void add(double s) {
        seconds.add(s);
    }

    synchronized void failed(Throwable t) {
        failures++;
        lastFailure = String.valueOf(t.getMessage() == null ? t.toString() : t.getMessage()).lines().findFirst().orElse("");
    }

    synchronized void memory(long heap, long rss) {
        heapPeak = Math.max(heapPeak, heap);
        rssPeak = Math.max(rssPeak, rss);
    }

    synchronized double median() {
        return percentile(50);
    }

    /** The nearest-rank percentile, or NaN without timings. */
    synchronized double percentile(double p) {
        if (seconds.isEmpty()) {
            return Double.NaN;
        }
        List<Double> s = new ArrayList<>(seconds);
        Collections.sort(s);
        int rank = (int) Math.ceil(p / 100.0 * s.size());
        return s.get(Math.max(0, Math.min(s.size() - 1, rank - 1)));
    }

    synchronized int count() {
        return seconds.size();
    }

    synchronized int failures() {
        return failures;
    }

    synchronized String lastFailure() {
        return lastFailure;
    }

    synchronized long heapPeak() {
        return heapPeak;
    }

    synchronized long rssPeak() {
        return rssPeak;
    }
}
