package dev.airlock.exec;

import dev.airlock.event.ExecState;

import java.util.function.BiConsumer;

import static dev.airlock.event.ExecState.CANCELLED;
import static dev.airlock.event.ExecState.DISPATCHED;
import static dev.airlock.event.ExecState.DONE;
import static dev.airlock.event.ExecState.FAILED;
import static dev.airlock.event.ExecState.KILLING;
import static dev.airlock.event.ExecState.NEW;
import static dev.airlock.event.ExecState.STAGED;
import static dev.airlock.event.ExecState.STAGING;

/**
 * One exec's states: {@code NEW -> STAGING -> STAGED -> DISPATCHED -> DONE}; {@code CANCELLED}
 * from NEW, STAGING or STAGED; {@code KILLING} from DISPATCHED; {@code FAILED} from any state
 * before the end. The cause of the end (exit, timeout, cancel, failure) is recorded in the same
 * transition that decides it, so a result never contradicts the state. Each transition holds the
 * shared lock for a few instructions only; the observer runs after the lock is released, so an
 * observer may block (tests park transitions on latches to force orderings).
 */
public final class ExecStateMachine {

    /** What a cancel found, which tells the caller what is left to do. */
    public enum CancelOutcome {
        /** Cancelled before dispatch: the command will never run. */
        NEVER_DISPATCHED,
        /** It had been dispatched: the caller kills the process tree. */
        KILL,
        /** Already ended, cancelled or being killed: nothing to do. */
        NOTHING
    }

    /** Why an exec ended (or is ending). */
    public enum Cause {
        /** Still running, or ended by its own exit. */
        EXIT,
        TIMEOUT,
        CANCEL,
        FAILURE
    }

    private final Object lock;
    private final BiConsumer<ExecState, ExecState> observer;
    private ExecState state = NEW;
    private ExecState cancelledFrom;
    private Cause cause = Cause.EXIT;

    public ExecStateMachine(Object lock, BiConsumer<ExecState, ExecState> observer) {
        this.lock = lock;
        this.observer = observer;
    }

    public ExecState state() {
        synchronized (lock) {
            return state;
        }
    }

    /** Why it ended: recorded by the cancel, timeout or failure that ended it; EXIT otherwise. */
    public Cause cause() {
        synchronized (lock) {
            return cause;
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

    /** Ends a dispatched exec; returns false (and does nothing) when it already ended. */
    public boolean toDone() {
        return end(DONE, null);
    }

    /** Ends the exec as failed (Airlock could not run it); returns false when it already ended. */
    public boolean fail() {
        return end(FAILED, Cause.FAILURE);
    }

    /** A cancel by the caller. */
    public CancelOutcome cancel() {
        return cancel(Cause.CANCEL);
    }

    /** A cancel or timeout: before dispatch the exec ends CANCELLED, after it a kill begins. */
    public CancelOutcome cancel(Cause why) {
        if (why != Cause.CANCEL && why != Cause.TIMEOUT) {
            throw new IllegalArgumentException("a cancel is caused by a cancel or a timeout, not " + why);
        }
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
            cause = why;
            to = state;
        }
        observer.accept(from, to);
        return to == CANCELLED ? CancelOutcome.NEVER_DISPATCHED : CancelOutcome.KILL;
    }

    private boolean end(ExecState to, Cause why) {
        ExecState from;
        boolean ended;
        synchronized (lock) {
            from = state;
            ended = !from.isTerminal();
            if (ended) {
                state = to;
                if (why != null) {
                    cause = why;
                }
            }
        }
        if (ended) {
            observer.accept(from, to); // outside the lock: an observer may read the state
        }
        return ended;
    }

    private boolean move(ExecState from, ExecState to) {
        boolean moved;
        synchronized (lock) {
            moved = state == from;
            if (moved) {
                state = to;
            }
        }
        if (moved) {
            observer.accept(from, to);
        }
        return moved;
    }
}
