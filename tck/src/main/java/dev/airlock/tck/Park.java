package dev.airlock.tck;

import dev.airlock.event.ExecListener;
import dev.airlock.event.ExecState;
import dev.airlock.event.ExecTransition;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Holds the first user exec at one state transition, to force an ordering without sleeping.
 * {@link ExecListener#onTransition} runs on the exec's own thread outside any lock, so blocking
 * there parks the flow. The flow is let go when the exec is cancelled (the cancelling thread
 * reports {@code -> CANCELLED} here) or by {@link #release()}.
 */
final class Park implements ExecListener {
    private final ExecState from;
    private final ExecState to;
    private final AtomicBoolean armed = new AtomicBoolean(true);
    private final CountDownLatch parked = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);
    private volatile boolean dispatched;
    private volatile long heldExec = -1;
    /** The held exec's transitions after the one it was held at, as {@code FROM -> TO}. */
    private final List<String> afterHold = new CopyOnWriteArrayList<>();

    /** Parks on the first user exec's {@code from -> to} transition. */
    Park(ExecState from, ExecState to) {
        this.from = from;
        this.to = to;
    }

    @Override
    public void onTransition(ExecTransition t) {
        if (t.internal()) {
            return; // Airlock's own scripts (files, staging, kill) pass freely
        }
        if (t.execId() == heldExec) {
            afterHold.add(t.from() + " -> " + t.to());
        }
        if (t.to() == ExecState.DISPATCHED) {
            dispatched = true;
        }
        if (t.to() == ExecState.CANCELLED) {
            released.countDown();
        }
        if (t.from() == from && t.to() == to && armed.compareAndSet(true, false)) {
            heldExec = t.execId();
            parked.countDown();
            try {
                // Bounded, so a broken backend fails the test instead of hanging the build.
                released.await(2, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits until the exec is held. */
    void awaitParked() throws InterruptedException {
        assertTrue(parked.await(2, TimeUnit.MINUTES), "the exec never reached " + from + " -> " + to
                + "; was the environment opened with OpenContext.open(backend), which runs the core's exec flow and reports transitions to listeners?");
    }

    /**
     * What the held exec did after the transition it was held at: a cancel that came while it was
     * really held finds it in {@code to} and is its very next transition ({@code TO -> CANCELLED}).
     */
    List<String> afterHold() {
        return List.copyOf(afterHold);
    }

    void release() {
        released.countDown();
    }

    /** Whether a user exec reached DISPATCHED. */
    boolean dispatched() {
        return dispatched;
    }
}
