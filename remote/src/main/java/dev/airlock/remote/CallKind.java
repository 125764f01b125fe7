package dev.airlock.remote;

/**
 * What a remote call does, which decides whether it may be sent twice. The rule lives here and
 * nowhere else: a call is retried only when sending it again cannot change the outcome.
 */
public enum CallKind {
    /** Reads a value or bytes (a GET, a download, a log read by offset). */
    READ(true),
    /** Asks for the state of something (a sandbox's status, an exec's exit code). */
    STATUS(true),
    /** Uploads one whole part to a fixed place (a PUT of a file, a stdin chunk at an offset): sent twice, same bytes. */
    UPLOAD_PART(true),
    /** A call that carries an idempotency key the service deduplicates on (gRPC {@code x-idempotency-key}, Modal's exec_id). */
    KEYED(true),
    /** Starts a command. Never sent twice: a lost answer makes the outcome unknown, not a reason to resend. */
    DISPATCH(false);

    private final boolean idempotent;

    CallKind(boolean idempotent) {
        this.idempotent = idempotent;
    }

    /** Whether sending this call again is harmless. */
    public boolean idempotent() {
        return idempotent;
    }
}
