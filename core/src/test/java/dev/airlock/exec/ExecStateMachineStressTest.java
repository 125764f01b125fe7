package dev.airlock.exec;

import dev.airlock.event.ExecState;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Randomized interleavings of one exec's flow against cancels and a shared stop, from several
 * threads at once: exactly one stop, no dispatch after a cancel, nothing staged left behind.
 */
class ExecStateMachineStressTest {

    /** A flow that follows the exec run's protocol, recording what it did. */
    private static final class Flow {
        final ExecStateMachine sm;
        final AtomicInteger staged = new AtomicInteger();
        volatile boolean dispatched;
        volatile boolean killed;

        Flow(Object lock) {
            this.sm = new ExecStateMachine(lock, (a, b) -> Thread.yield());
        }

        void run(Random r) {
            if (!sm.toStaging()) {
                return;
            }
            staged.incrementAndGet(); // "upload"
            spin(r);
            if (!sm.toStaged() || !sm.toDispatched()) {
                staged.decrementAndGet(); // removed before returning
                return;
            }
            dispatched = true;
            spin(r);
            staged.decrementAndGet(); // the command's prefix removes it
            sm.toDone();
        }

        void cancel() {
            switch (sm.cancel()) {
                case KILL -> killed = true;
                case NEVER_DISPATCHED, NOTHING -> {
                }
            }
        }
    }

    private static void spin(Random r) {
        for (int i = r.nextInt(50); i > 0; i--) {
            Thread.onSpinWait();
        }
        if (r.nextInt(8) == 0) {
            Thread.yield();
        }
    }

    @Test
    void tenThousandInterleavingsKeepTheInvariants() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        Random seeds = new Random(20261129);
        try {
            for (int i = 0; i < 10_000; i++) {
                long seed = seeds.nextLong();
                Object lock = new Object();
                Flow flow = new Flow(lock);
                AtomicInteger stops = new AtomicInteger();
                StopOnce stopOnce = new StopOnce(() -> {
                    stops.incrementAndGet();
                    flow.cancel(); // close cancels live execs
                });
                CountDownLatch go = new CountDownLatch(1);
                CountDownLatch end = new CountDownLatch(4);
                Random r = new Random(seed);
                long s1 = r.nextLong(), s2 = r.nextLong(), s3 = r.nextLong(), s4 = r.nextLong();
                pool.execute(() -> race(go, end, () -> flow.run(new Random(s1))));
                pool.execute(() -> race(go, end, () -> { spin(new Random(s2)); flow.cancel(); }));
                pool.execute(() -> race(go, end, () -> { spin(new Random(s3)); stopOnce.stop(); }));
                pool.execute(() -> race(go, end, () -> { spin(new Random(s4)); stopOnce.stop(); }));
                go.countDown();
                assertTrue(end.await(10, TimeUnit.SECONDS), "iteration " + i + " hung (seed " + seed + ")");

                assertEquals(1, stops.get(), "stop ran " + stops.get() + " times (seed " + seed + ")");
                ExecState last = flow.sm.state();
                if (last == ExecState.CANCELLED) {
                    assertFalse(flow.dispatched, "dispatched after a cancel (seed " + seed + ")");
                }
                if (flow.dispatched) {
                    assertTrue(flow.killed || last == ExecState.DONE || last == ExecState.KILLING,
                            "a dispatched exec ended in " + last + " (seed " + seed + ")");
                }
                assertEquals(0, flow.staged.get(), "a staged file was left (seed " + seed + ")");
                assertTrue(last.isTerminal() || last == ExecState.KILLING, "ended in " + last + " (seed " + seed + ")");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static void race(CountDownLatch go, CountDownLatch end, Runnable r) {
        try {
            go.await();
            r.run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            end.countDown();
        }
    }

    @Test
    void cancelFromEachStateHasOneOutcome() {
        Object lock = new Object();
        ExecStateMachine a = new ExecStateMachine(lock, (x, y) -> { });
        assertEquals(ExecStateMachine.CancelOutcome.NEVER_DISPATCHED, a.cancel());
        assertFalse(a.toStaging(), "a cancelled exec must not start staging");
        assertEquals(ExecStateMachine.CancelOutcome.NOTHING, a.cancel());

        ExecStateMachine b = new ExecStateMachine(lock, (x, y) -> { });
        assertTrue(b.toStaging());
        assertTrue(b.toStaged());
        assertEquals(ExecStateMachine.CancelOutcome.NEVER_DISPATCHED, b.cancel());
        assertEquals(ExecState.STAGED, b.cancelledFrom());
        assertFalse(b.toDispatched(), "a cancelled exec must never be dispatched");

        ExecStateMachine c = new ExecStateMachine(lock, (x, y) -> { });
        assertTrue(c.toStaging() && c.toStaged() && c.toDispatched());
        assertEquals(ExecStateMachine.CancelOutcome.KILL, c.cancel());
        assertEquals(ExecState.KILLING, c.state());
        assertEquals(ExecStateMachine.CancelOutcome.NOTHING, c.cancel(), "a second cancel kills nothing twice");
        c.toDone();
        assertEquals(ExecState.DONE, c.state());
    }

    /** The cause is decided with the state, each move is observed once, and an ended exec moves no more. */
    @Test
    void eachEndRecordsItsCauseAndTheObserverSeesEveryMoveOnce() {
        java.util.List<String> moves = new java.util.ArrayList<>();
        ExecStateMachine t = new ExecStateMachine(new Object(), (x, y) -> moves.add(x + ">" + y));
        assertEquals(ExecStateMachine.Cause.EXIT, t.cause());
        assertTrue(t.toStaging() && t.toStaged() && t.toDispatched());
        assertFalse(t.toStaging(), "a dispatched exec stages again");
        assertEquals(ExecStateMachine.CancelOutcome.KILL, t.cancel(ExecStateMachine.Cause.TIMEOUT));
        assertEquals(ExecStateMachine.Cause.TIMEOUT, t.cause());
        assertEquals(null, t.cancelledFrom(), "a kill is not a cancel before dispatch");
        assertTrue(t.toDone());
        assertFalse(t.toDone(), "ended twice");
        assertFalse(t.fail(), "a finished exec failed");
        assertEquals(ExecStateMachine.Cause.TIMEOUT, t.cause(), "a late failure rewrote the cause");
        assertEquals(java.util.List.of("NEW>STAGING", "STAGING>STAGED", "STAGED>DISPATCHED", "DISPATCHED>KILLING", "KILLING>DONE"),
                moves);

        ExecStateMachine f = new ExecStateMachine(new Object(), (x, y) -> { });
        assertTrue(f.toStaging());
        assertTrue(f.fail());
        assertEquals(ExecState.FAILED, f.state());
        assertEquals(ExecStateMachine.Cause.FAILURE, f.cause());
        assertFalse(f.toStaged(), "a failed exec went on");
        assertEquals(ExecStateMachine.CancelOutcome.NOTHING, f.cancel());
        assertEquals(ExecStateMachine.Cause.FAILURE, f.cause(), "a cancel after the failure rewrote its cause");

        ExecStateMachine n = new ExecStateMachine(new Object(), (x, y) -> { });
        assertEquals(ExecStateMachine.CancelOutcome.NEVER_DISPATCHED, n.cancel(ExecStateMachine.Cause.TIMEOUT));
        assertEquals(ExecState.NEW, n.cancelledFrom());
        assertEquals(ExecState.CANCELLED, n.state());
        assertEquals(ExecStateMachine.Cause.TIMEOUT, n.cause());
        assertFalse(n.toDone(), "a cancelled exec was ended again");
        assertEquals(ExecState.CANCELLED, n.state());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> new ExecStateMachine(new Object(), (x, y) -> { }).cancel(ExecStateMachine.Cause.FAILURE));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> new ExecStateMachine(new Object(), (x, y) -> { }).cancel(ExecStateMachine.Cause.EXIT));
    }
}
