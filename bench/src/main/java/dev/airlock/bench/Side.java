package dev.airlock.bench;

/** One side of a scenario: a measured action, run after its setup (environment, container, connection) is up. */
@FunctionalInterface
interface Side {
    /** Runs the measured action once; throws when it did not do what it should (wrong byte count, exit code). */
    void run() throws Exception;
}
