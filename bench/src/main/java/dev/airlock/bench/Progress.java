package dev.airlock.bench;

/** One line per step on stderr, so a long run shows where it is (stdout carries the table). */
final class Progress {
    private static final long START = System.nanoTime();

    private Progress() {
    }

    static void say(String what) {
        System.err.printf(java.util.Locale.ROOT, "bench [%5.0f s] %s%n", (System.nanoTime() - START) / 1e9, what);
    }
}
