package dev.airlock;

import java.time.Duration;
import java.util.Optional;

/**
 * A command on its way or running. Returned by {@link Environment#start} before staging begins,
 * so it can be cancelled at any point: a command cancelled before dispatch never runs.
 */
public interface Execution {

    /**
     * Stops the command: before dispatch it never runs (anything staged is removed); after
     * dispatch its whole process tree is killed. Idempotent. With {@code airlock.cancel=sandbox}
     * the sandbox is stopped as well.
     */
    void cancel();

    /**
     * Waits for the result. Returns empty when {@code timeout} passes first. The result is
     * returned only after output is drained and the caller's sinks are flushed.
     *
     * @throws AirlockException when the command could not be run (staging, denial, backend failure)
     */
    Optional<ExecResult> await(Duration timeout) throws InterruptedException;

    /** Waits without limit; see {@link #await(Duration)}. */
    ExecResult await() throws InterruptedException;

    /** The exit code once finished. */
    Optional<Integer> exitCode();

    boolean isDone();
}
