package dev.airlock.exec;

import dev.airlock.AirlockException;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import dev.airlock.event.AuditEvent;
import dev.airlock.event.ExecListener;
import dev.airlock.event.ExecState;
import dev.airlock.event.ExecTransition;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.constraints.Size;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random sequences of start, cancel, timeout, close, launch failure and stalled hooks against the
 * real core (on host processes), checking the exec invariants after each sequence. Fixed seed, so
 * a failure reproduces and PIT sees the same runs every time.
 */
class ExecCorePropertyTest {
    private static final Duration HANG = Duration.ofSeconds(10);

    enum Kind { QUICK, SLEEP, TIMEOUT, STAGED_QUICK, CANCEL_LAST, CANCEL_FIRST, FAIL_NEXT_LAUNCH, STALL_NEXT_STAGE,
        LOSE_NEXT_LAUNCH, CLOSE }

    @Provide
    Arbitrary<List<Kind>> sequences() {
        return Arbitraries.of(Kind.class).list().ofMinSize(1).ofMaxSize(7);
    }

    @Property(seed = "20261201", shrinking = ShrinkingMode.OFF)
    void everyExecEndsOnceAndNothingOutlivesClose(@ForAll("sequences") @Size(max = 7) List<Kind> actions,
                                                  @ForAll boolean cancelStopsSandbox) throws Exception {
        Path dir = Files.createTempDirectory("airlock-prop-");
        Map<Long, List<ExecState>> states = new ConcurrentHashMap<>();
        List<ExecTransition> all = new CopyOnWriteArrayList<>();
        ExecListener l = new ExecListener() {
            @Override
            public void onTransition(ExecTransition t) {
                if (!t.internal()) {
                    all.add(t);
                    states.computeIfAbsent(t.execId(), k -> new CopyOnWriteArrayList<>()).add(t.to());
                }
            }

            @Override
            public void onEvent(AuditEvent e) {
            }
        };
        HostBackend b = new HostBackend(HostBackend.settings(dir,
                "airlock.cancel", cancelStopsSandbox ? "sandbox" : "exec"), StdinMode.PAYLOAD, false, List.of(l));
        List<Execution> execs = new ArrayList<>();
        List<Boolean> endedBeforeCancel = new ArrayList<>();
        int stopsBeforeClose = -1;
        boolean liveCancelled = false;
        try {
            for (Kind k : actions) {
                try {
                    switch (k) {
                        case QUICK -> execs.add(b.start(ExecRequest.of("echo hi")));
                        case SLEEP -> execs.add(b.start(ExecRequest.of("sleep 30")));
                        case TIMEOUT -> execs.add(b.start(ExecRequest.builder("sleep 30").timeout(Duration.ofMillis(300)).build()));
                        case STAGED_QUICK -> execs.add(b.start(ExecRequest.builder("cat").stdin(Payload.ofUtf8("x")).build()));
                        case CANCEL_LAST, CANCEL_FIRST -> {
                            if (!execs.isEmpty()) {
                                Execution e = k == Kind.CANCEL_LAST ? execs.get(execs.size() - 1) : execs.get(0);
                                boolean ended = e.isDone();
                                e.cancel();
                                endedBeforeCancel.add(ended);
                                liveCancelled |= !ended;
                            }
                        }
                        case FAIL_NEXT_LAUNCH -> b.launch = HostBackend.Fault.FAIL;
                        case LOSE_NEXT_LAUNCH -> b.launch = HostBackend.Fault.LOSE;
                        case STALL_NEXT_STAGE -> b.stage = HostBackend.Fault.STALL_UNINTERRUPTIBLY;
                        case CLOSE -> {
                            stopsBeforeClose = b.stops.get();
                            b.env.close();
                        }
                    }
                } catch (EnvironmentClosedException closed) {
                    // after a close or a sandbox-wide cancel: refused, never run
                }
            }
            if (!liveCancelled && stopsBeforeClose < 0) {
                assertEquals(0, b.stops.get(), "the sandbox stopped although no live exec was cancelled");
            }
            b.release.countDown();
            for (Execution e : execs) {
                e.cancel();
                Optional<ExecResult> r;
                try {
                    r = e.await(HANG);
                } catch (AirlockException failed) {
                    continue; // FAILED: an answer too
                }
                assertTrue(r.isPresent(), "an exec never ended; actions " + actions);
            }
        } finally {
            b.release.countDown();
            b.env.close();
        }
        assertEquals(1, b.stops.get(), "the sandbox is stopped exactly once; actions " + actions);
        for (Map.Entry<Long, List<ExecState>> e : states.entrySet()) {
            List<ExecState> terminal = e.getValue().stream().filter(ExecState::isTerminal).toList();
            assertEquals(1, terminal.size(), "exec " + e.getKey() + " went " + e.getValue() + "; actions " + actions);
            int cancelledAt = e.getValue().indexOf(ExecState.CANCELLED);
            if (cancelledAt >= 0) {
                assertFalse(e.getValue().contains(ExecState.DISPATCHED), "dispatched after a cancel: " + e.getValue());
            }
        }
        assertEquals(execs.size(), states.size(), "every started exec reported its transitions");
        long until = System.nanoTime() + HANG.toNanos();
        for (Process p : b.launched) {
            while (HostBackend.alive(p.pid())) {
                assertTrue(System.nanoTime() < until, "a process of the run survived close; actions " + actions);
                Thread.sleep(20);
            }
        }
        assertFalse(Files.exists(Path.of(b.target().privateDir())), "the private dir (and what was staged in it) is gone");
        try (Stream<Path> s = Files.walk(dir)) {
            List<Path> left = s.filter(p -> p.getFileName().toString().startsWith(".airlock-")).collect(Collectors.toList());
            assertEquals(List.of(), left, "staged files left");
        }
    }
}
