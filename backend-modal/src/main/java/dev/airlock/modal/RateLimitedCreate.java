package dev.airlock.modal;

import dev.airlock.BackendUnavailableException;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.remote.WireFailure;

import java.util.function.Supplier;

/**
 * A sandbox create that Modal refused {@code RESOURCE_EXHAUSTED} (its sandbox creation rate, a
 * burst of 150 refilled at 5 per second, or another quota of the workspace). The refusal is an
 * answer given before anything is made, and the create carries one {@code x-idempotency-key} on
 * every attempt (a create that was made is answered again, not made twice), so the create is a
 * {@code KEYED} call that {@code remote/} sends again after its backoff, at most
 * {@code airlock.modal.retry.max-attempts} times in all: Modal sends no retry delay that its SDKs
 * read, and its bucket gives a sandbox back every 200 ms. (The official SDKs retry only
 * DEADLINE_EXCEEDED, UNAVAILABLE, CANCELLED, INTERNAL and UNKNOWN, and raise
 * {@code ResourceExhaustedError} at once.) When the attempts run out, this says so in one line:
 * which limit, when to try again and what to do.
 */
final class RateLimitedCreate {
    private RateLimitedCreate() {
    }

    /** Runs {@code create} (already retried by {@code remote/}); a final RESOURCE_EXHAUSTED becomes the one line. */
    static <T> T send(RetryPolicy policy, Supplier<T> create) {
        try {
            return create.get();
        } catch (BackendUnavailableException e) {
            WireFailure refused = resourceExhausted(e);
            if (refused == null) {
                throw e;
            }
            throw giveUp(refused, policy, e);
        }
    }

    /** The service's RESOURCE_EXHAUSTED behind a mapped failure, or null. */
    private static WireFailure resourceExhausted(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof WireFailure w) {
                return w.stage() == WireFailure.Stage.ANSWERED && "RESOURCE_EXHAUSTED".equals(w.grpcCode()) ? w : null;
            }
        }
        return null;
    }

    /** The one line; the detail is the service's description, already one line and redacted by {@code remote/}. */
    static BackendUnavailableException giveUp(WireFailure refused, RetryPolicy policy, Throwable cause) {
        String detail = refused.detail().isEmpty() || refused.detail().equals(refused.grpcCode()) ? ""
                : ": " + refused.detail();
        int attempts = policy.maxAttempts();
        return new BackendUnavailableException("Modal refused to create a sandbox: rate limited (RESOURCE_EXHAUSTED" + detail + ")"
                + (attempts > 1 ? ", still after " + attempts + " attempts" : "")
                + "; Modal refills sandbox creation at 5 per second in bursts of up to 150, so try again in a few seconds,"
                + " or create fewer sandboxes at once (" + ModalSettings.PREFIX + ".retry.max-attempts and "
                + ModalSettings.PREFIX + ".retry.max-backoff let this client wait longer)", cause);
    }
}
