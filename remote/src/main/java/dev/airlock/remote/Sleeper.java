package dev.airlock.remote;

import java.time.Duration;

/**
 * How a retry waits. resilience4j's own sleep is one JVM-wide static; waiting through this
 * instead lets each policy own its clock, and lets a test record the waits instead of serving them.
 */
@FunctionalInterface
public interface Sleeper {
    Sleeper REAL = d -> Thread.sleep(d.toMillis());

    void sleep(Duration d) throws InterruptedException;
}
