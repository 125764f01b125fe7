package dev.airlock.event;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * Observes what an environment does: every exec, its state transitions, denials and approvals.
 * Called on the thread doing the work, never under an Airlock lock; keep it quick and do not
 * throw. The audit file ({@code airlock.audit.file}) is one such listener.
 */
public interface ExecListener {

    /** An exec moved from one state to the next ({@code NEW -> STAGING -> STAGED -> DISPATCHED -> DONE}...). */
    default void onTransition(ExecTransition transition) {
    }

    /**
     * A finished exec ({@code exec}), a file change ({@code file}: a write, delete, mkdirs or
     * copyIn, with its {@code op} and, where it failed, its {@code error}; reads are not reported),
     * a denial or an approval, and the environment's {@code open} and {@code close}.
     */
    default void onEvent(AuditEvent event) {
    }

    /** A listener from a lambda that sees finished operations, denials and approvals: {@code ExecListener.ofEvents(e -> log(e))}. */
    static ExecListener ofEvents(Consumer<AuditEvent> onEvent) {
        Objects.requireNonNull(onEvent, "onEvent");
        return new ExecListener() {
            @Override
            public void onEvent(AuditEvent event) {
                onEvent.accept(event);
            }
        };
    }

    /** A listener from a lambda that sees every exec's state transitions. */
    static ExecListener ofTransitions(Consumer<ExecTransition> onTransition) {
        Objects.requireNonNull(onTransition, "onTransition");
        return new ExecListener() {
            @Override
            public void onTransition(ExecTransition transition) {
                onTransition.accept(transition);
            }
        };
    }
}
