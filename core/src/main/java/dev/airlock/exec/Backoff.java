package dev.airlock.exec;

/**
 * The waits between tries of a step on a target that may not answer yet (a kill after a lost
 * connection): {@value #FIRST_MS} ms, doubling with each try that did not reach the target, up to
 * {@value #MAX_MS} ms, so a recovering network is neither hammered nor waited on for long.
 */
final class Backoff {
    static final long FIRST_MS = 10;
    static final long MAX_MS = 1000;

    private long next = FIRST_MS;

    /** The wait before the next try after one that did not reach the target; each is twice the last, up to the max. */
    long afterFailure() {
        long wait = next;
        next = Math.min(MAX_MS, next * 2);
        return wait;
    }

    /** The wait after a try that reached the target: the first again, and the doubling starts over. */
    long afterAnswer() {
        next = FIRST_MS;
        return FIRST_MS;
    }
}
