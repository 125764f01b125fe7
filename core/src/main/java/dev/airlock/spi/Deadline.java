package dev.airlock.spi;

import java.time.Duration;

/**
 * When a hook must have returned. The core never waits on a hook past its deadline: it interrupts
 * the hook's thread then and carries on (the exec ends as a timeout, cancel or failure), so a hook
 * should pass the remaining time to its client's calls and give up, not retry, once it passed.
 *
 * @param nanoTime the deadline on the {@link System#nanoTime()} clock
 */
public record Deadline(long nanoTime) {

    /** A deadline {@code d} from now. */
    public static Deadline in(Duration d) {
        long now = System.nanoTime();
        long n = d.toNanos();
        return new Deadline(n > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + n);
    }

    /** What is left, never negative. */
    public Duration remaining() {
        return Duration.ofNanos(Math.max(0, nanoTime - System.nanoTime()));
    }

    public boolean passed() {
        return nanoTime - System.nanoTime() <= 0;
    }
}
