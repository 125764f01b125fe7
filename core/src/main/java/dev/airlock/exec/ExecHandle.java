package dev.airlock.exec;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.ExecResult;
import dev.airlock.Execution;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** The caller's side of an exec: its result, completed once, by the flow, a cancel or a watchdog. */
abstract class ExecHandle implements Execution {
    final CompletableFuture<ExecResult> result = new CompletableFuture<>();

    @Override
    public Optional<ExecResult> await(Duration timeout) throws InterruptedException {
        try {
            return Optional.of(result.get(timeout.toNanos(), TimeUnit.NANOSECONDS));
        } catch (TimeoutException e) {
            return Optional.empty();
        } catch (ExecutionException e) {
            throw rethrow(e);
        }
    }

    @Override
    public ExecResult await() throws InterruptedException {
        try {
            return result.get();
        } catch (ExecutionException e) {
            throw rethrow(e);
        }
    }

    @Override
    public Optional<Integer> exitCode() {
        return result.isDone() && !result.isCompletedExceptionally() ? Optional.of(result.join().exitCode()) : Optional.empty();
    }

    @Override
    public boolean isDone() {
        return result.isDone();
    }

    /** Waits for the end without caring how it ended (close does). */
    void awaitResultQuietly(long nanos) {
        try {
            result.get(nanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // closing: the outcome no longer matters
        }
    }

    private static RuntimeException rethrow(ExecutionException e) {
        Throwable c = e.getCause();
        if (c instanceof AirlockException ae) {
            return ae; // the same exception, so callers can catch its type
        }
        return new BackendException(String.valueOf(c), c);
    }
}
