package dev.airlock.remote;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Every remote call of one client goes through here: retried by {@link RetryPolicy}'s rule,
 * guarded by one circuit breaker per client, and ended by {@link ErrorMapping}. A call signals a
 * failure by throwing {@link WireFailure} ({@link Http} does that for OkHttp); any other
 * exception passes through untouched and is never retried.
 *
 * <p>Order (outside in): Retry, CircuitBreaker, the call. Turn the clients' own retries off
 * ({@link HttpClients} does for OkHttp; grpc-java needs {@code disableRetry()}), or they multiply.
 */
public final class RemoteCalls {
    private final Service service;
    private final RetryPolicy policy;
    private final CircuitBreaker breaker;
    private final Random random;

    public RemoteCalls(Service service, RetryPolicy policy) {
        this.service = Objects.requireNonNull(service, "service");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.random = new Random(policy.seed());
        this.breaker = CircuitBreaker.of(service.name(), CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(policy.breakerFailures())
                .minimumNumberOfCalls(policy.breakerFailures())
                .failureRateThreshold(100f) // every call in the window failed: the service is down, not flaky
                .waitDurationInOpenState(policy.breakerOpenFor())
                .permittedNumberOfCallsInHalfOpenState(1)
                .recordException(t -> t instanceof WireFailure w && w.serviceFailing())
                .writableStackTraceEnabled(false)
                .build());
    }

    public Service service() {
        return service;
    }

    public RetryPolicy policy() {
        return policy;
    }

    /**
     * An idempotent call that needs to know its attempt: every attempt gets the same idempotency
     * key and its own number (gRPC {@code x-idempotency-key} and {@code x-retry-attempt}).
     */
    public <T> T call(CallKind kind, String name, Resource resource, Function<Attempt, T> call) {
        String key = Attempt.newKey();
        AtomicInteger n = new AtomicInteger();
        return call(kind, name, resource, () -> call.apply(new Attempt(n.incrementAndGet(), key)));
    }

    /** An idempotent call ({@link CallKind#DISPATCH} is refused here: use {@link #dispatch}). */
    public <T> T call(CallKind kind, String name, Resource resource, Supplier<T> call) {
        if (!kind.idempotent()) {
            throw new IllegalArgumentException(kind + " goes through dispatch(), which never retries");
        }
        Supplier<T> guarded = CircuitBreaker.decorateSupplier(breaker, call);
        Retry retry = Retry.of(service.name() + "." + name, RetryConfig.<T>custom()
                .maxAttempts(policy.maxAttempts())
                .retryOnException(t -> t instanceof WireFailure w && policy.retryable(kind, w))
                .intervalBiFunction((attempt, either) -> waitBeforeRetry(name, attempt, either.getLeft()))
                .failAfterMaxAttempts(false)
                .build());
        try {
            return Retry.decorateSupplier(retry, guarded).get();
        } catch (CallNotPermittedException e) {
            throw breakerOpen(name, e);
        } catch (WireFailure f) {
            throw ErrorMapping.map(service, name, resource, f);
        }
    }

    /**
     * Starts a command: sent once, never again. When its answer is lost the outcome is unknown:
     * {@link dev.airlock.DispatchOutcomeUnknownException}.
     */
    public <T> T dispatch(String name, Resource resource, Supplier<T> send) {
        return dispatch(name, resource, send, null);
    }

    /**
     * Starts a command, and when its answer is lost asks the service whether it ran
     * ({@code ranQuery}, a {@link CallKind#STATUS} call that may be retried): present means it
     * ran and gives its answer; empty means it never started (an error; nothing is resent).
     */
    public <T> T dispatch(String name, Resource resource, Supplier<T> send, Supplier<Optional<T>> ranQuery) {
        try {
            return CircuitBreaker.decorateSupplier(breaker, send).get();
        } catch (CallNotPermittedException e) {
            throw breakerOpen(name, e);
        } catch (WireFailure f) {
            if (!RetryPolicy.dispatchMayHaveRun(f)) {
                throw ErrorMapping.map(service, name, resource, f);
            }
            if (ranQuery == null) {
                throw ErrorMapping.outcomeUnknown(service, name, f);
            }
            Optional<T> ran;
            try {
                ran = call(CallKind.STATUS, name + " (did it run?)", resource, ranQuery);
            } catch (AirlockException queryFailed) {
                AirlockException unknown = ErrorMapping.outcomeUnknown(service, name, f);
                unknown.addSuppressed(queryFailed);
                throw unknown;
            }
            return ran.orElseThrow(() -> new BackendException(service.name() + " lost the answer to " + name
                    + " and says the command never started; it was not sent again, so run it again if it is still wanted", f));
        }
    }

    private long waitBeforeRetry(String name, int failedAttempts, Throwable failure) {
        Duration d = policy.waitBefore(failedAttempts, (WireFailure) failure, random);
        try {
            policy.sleeper().sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // interrupt means cancel: stop retrying, keep the flag
            throw new BackendException("interrupted while waiting to retry " + service.name() + " " + name, e);
        }
        return 0L; // already waited through our own sleeper (see Sleeper)
    }

    private BackendUnavailableException breakerOpen(String name, CallNotPermittedException e) {
        return new BackendUnavailableException(service.name() + " failed the last " + policy.breakerFailures()
                + " calls, so " + name + " was not sent; not calling it again for " + ErrorMapping.seconds(policy.breakerOpenFor())
                + "; check " + service.endpointSetting() + " and the service's status", e);
    }
}
