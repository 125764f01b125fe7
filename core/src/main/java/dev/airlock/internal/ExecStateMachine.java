package dev.airlock.internal;

import dev.airlock.event.ExecState;

import java.util.function.BiConsumer;

import static dev.airlock.event.ExecState.CANCELLED;
import static dev.airlock.event.ExecState.DISPATCHED;
import static dev.airlock.event.ExecState.DONE;
import static dev.airlock.event.ExecState.KILLING;
import static dev.airlock.event.ExecState.NEW;
import static dev.airlock.event.ExecState.STAGED;
import static dev.airlock.event.ExecState.STAGING;

/**
 * One exec's states: {@code NEW -> STAGING -> STAGED -> DISPATCHED -> DONE}; {@code CANCELLED}
 * from NEW, STAGING or STAGED; {@code KILLING} from DISPATCHED. Each transition holds the shared
 * lock for a few instructions only; the observer runs after the lock is released, so an observer
 * may block (tests park transitions on latches to force orderings).
 */
public final class ExecStateMachine {

    /** What a cancel found, which tells the caller what is left to do. */
    public enum CancelOutcome {
        /** Cancelled before dispatch: the command will never run. */
        NEVER_DISPATCHED,
        /** It had been dispatched: the caller kills the process tree. */
        KILL,
        /** Already finished, cancelled or being killed: nothing to do. */
        NOTHING
    }

    private final Object lock;
    private final BiConsumer<ExecState, ExecState> observer;
    private ExecState state = NEW;
    private ExecState cancelledFrom;

    public ExecStateMachine(Object lock, BiConsumer<ExecState, ExecState> observer) {
        this.lock = lock;
        this.observer = observer;
    }

    public ExecState state() {
        synchronized (lock) {
            return state;
        }
    }

    /** The state a pre-dispatch cancel came from (NEW, STAGING or STAGED), or null. */
    public ExecState cancelledFrom() {
        synchronized (lock) {
            return cancelledFrom;
        }
    }

    public boolean toStaging() {
        return move(NEW, STAGING);
    }

    public boolean toStaged() {
        return move(STAGING, STAGED);
    }

    /**
     * The commit point: after this returns true the command is (about to be) sent and a cancel
     * becomes a kill. Returns false when a cancel came first; the command must then not be sent.
     */
    public boolean toDispatched() {
        return move(STAGED, DISPATCHED);
    }

    /** Ends the exec; a no-op when it already ended (cancelled before dispatch). */
    public void toDone() {
        ExecState from;
        synchronized (lock) {
            if (state.isTerminal()) {
                return;
            }
            from = state;
            state = DONE;
        }
        observer.accept(from, DONE);
    }

    public CancelOutcome cancel() {
        ExecState from;
        ExecState to;
        synchronized (lock) {
            from = state;
            switch (state) {
                case NEW, STAGING, STAGED -> {
                    state = CANCELLED;
                    cancelledFrom = from;
                }
                case DISPATCHED -> state = KILLING;
                default -> {
                    return CancelOutcome.NOTHING;
                }
            }
            to = state;
        }
        observer.accept(from, to);
        return to == CANCELLED ? CancelOutcome.NEVER_DISPATCHED : CancelOutcome.KILL;
    }

    private boolean move(ExecState from, ExecState to) {
        synchronized (lock) {
            if (state != from) {
                return false;
            }
            state = to;
        }
        observer.accept(from, to);
        return true;
    }
}
