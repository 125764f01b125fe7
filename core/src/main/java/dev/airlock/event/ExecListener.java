package dev.airlock.event;

/**
 * Observes what an environment does: every exec, its state transitions, denials and approvals.
 * Called on the thread doing the work, never under an Airlock lock; keep it quick and do not
 * throw. The audit file ({@code airlock.audit.file}) is one such listener.
 */
public interface ExecListener {

    /** An exec moved from one state to the next ({@code NEW -> STAGING -> STAGED -> DISPATCHED -> DONE}...). */
    default void onTransition(ExecTransition transition) {
    }

    /** A finished exec, file operation, denial or approval. */
    default void onEvent(AuditEvent event) {
    }
}
