package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.StagingException;
import dev.airlock.event.AuditEvent;
import dev.airlock.event.ExecListener;
import dev.airlock.event.ExecState;
import dev.airlock.event.ExecTransition;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Forces each ordering of cancel, close, stage and dispatch with a listener that parks the exec's
 * own thread right after a chosen transition, on the real local backend in PAYLOAD mode (so
 * staging really writes a file that must disappear).
 */
class ExecOrderingTest {
    @TempDir
    Path dir;

    /** Parks the flow thread after the transition into {@code at} until released. */
    private static final class Park implements ExecListener {
        final ExecState at;
        final CountDownLatch parked = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final List<ExecTransition> seen = new CopyOnWriteArrayList<>();
        final AtomicInteger closes = new AtomicInteger();

        Park(ExecState at) {
            this.at = at;
        }

        @Override
        public void onTransition(ExecTransition t) {
            if (t.internal()) {
                return;
            }
            seen.add(t);
            if (t.to() == at && parked.getCount() > 0) {
                parked.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public void onEvent(AuditEvent e) {
            if (e.type().equals("close")) {
                closes.incrementAndGet();
            }
        }
    }

    private Environment open(ExecListener l, String cancelMode) {
        Settings s = Settings.of("airlock.container", "no", "airlock.local.stdin-mode", "payload", "airlock.cancel", cancelMode);
        return Environments.open(OpenContext.of(s).withListener(l));
    }

    private String sideEffect() {
        return "touch " + dir.resolve("ran") + "; cat >/dev/null";
    }

    private static List<Path> stagedFiles(Environment env) throws Exception {
        Path staging = Path.of(env.target().stagingDir());
        if (!Files.isDirectory(staging)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(staging)) {
            return s.toList();
        }
    }

    @ParameterizedTest(name = "cancel while parked at {0}")
    @EnumSource(value = ExecState.class, names = {"STAGING", "STAGED"})
    void cancelBeforeDispatchNeverRunsAndLeavesNothingStaged(ExecState at) throws Exception {
        Park park = new Park(at);
        try (Environment env = open(park, "exec")) {
            Execution e = env.start(ExecRequest.builder(sideEffect()).stdin(Payload.ofUtf8("input")).build());
            assertTrue(park.parked.await(10, TimeUnit.SECONDS));
            Thread canceller = new Thread(e::cancel);
            canceller.start();
            // The cancel has claimed the exec once the CANCELLED transition is seen.
            assertTrue(Procs.eventually(5000, () -> park.seen.stream().anyMatch(t -> t.to() == ExecState.CANCELLED)));
            park.release.countDown();
            canceller.join(10_000);
            assertFalse(canceller.isAlive());
            ExecResult r = e.await();
            assertTrue(r.cancelled());
            assertEquals(130, r.exitCode());
            assertFalse(Files.exists(dir.resolve("ran")), "a cancelled command ran");
            assertTrue(park.seen.stream().noneMatch(t -> t.to() == ExecState.DISPATCHED), "dispatched after cancel");
            assertEquals(List.of(), stagedFiles(env), "cancel returned before the staged file was removed");
        }
    }

    @Test
    void cancelBetweenCommitAndLaunchKillsAtOnce() throws Exception {
        Park park = new Park(ExecState.DISPATCHED);
        try (Environment env = open(park, "exec")) {
            Execution e = env.start(ExecRequest.builder("sleep 2; " + sideEffect()).stdin(Payload.ofUtf8("x")).build());
            assertTrue(park.parked.await(10, TimeUnit.SECONDS));
            Thread canceller = new Thread(e::cancel);
            canceller.start();
            assertTrue(Procs.eventually(5000, () -> park.seen.stream().anyMatch(t -> t.to() == ExecState.KILLING)));
            park.release.countDown();
            ExecResult r = e.await();
            canceller.join(10_000);
            assertEquals(130, r.exitCode());
            assertTrue(r.cancelled());
            Thread.sleep(2500);
            assertFalse(Files.exists(dir.resolve("ran")), "the command outlived its cancel");
        }
    }

    @Test
    void closeWhileStagingStopsOnceAndLeavesNothing() throws Exception {
        Park park = new Park(ExecState.STAGING);
        Environment env = open(park, "exec");
        Execution e = env.start(ExecRequest.builder(sideEffect()).stdin(Payload.ofUtf8("input")).build());
        assertTrue(park.parked.await(10, TimeUnit.SECONDS));
        String privateDir = env.target().privateDir();
        Thread closer1 = new Thread(env::close);
        Thread closer2 = new Thread(env::close);
        closer1.start();
        closer2.start();
        assertTrue(Procs.eventually(5000, () -> park.seen.stream().anyMatch(t -> t.to() == ExecState.CANCELLED)));
        park.release.countDown();
        closer1.join(15_000);
        closer2.join(15_000);
        assertFalse(closer1.isAlive() || closer2.isAlive());
        assertEquals(130, e.await().exitCode());
        assertEquals(1, park.closes.get(), "the environment must stop exactly once");
        assertFalse(Files.exists(dir.resolve("ran")));
        assertFalse(Files.exists(Path.of(privateDir)));
    }

    @Test
    void aFailedStagedRedirectIsAStagingExceptionNotAnExitCode() throws Exception {
        Park park = new Park(ExecState.DISPATCHED);
        try (Environment env = open(park, "exec")) {
            Execution e = env.start(ExecRequest.builder(sideEffect()).stdin(Payload.ofUtf8("input")).build());
            assertTrue(park.parked.await(10, TimeUnit.SECONDS));
            for (Path p : stagedFiles(env)) {
                Files.delete(p); // the staged stdin vanishes between upload and redirect
            }
            park.release.countDown();
            StagingException ex = assertThrows(StagingException.class, e::await);
            assertTrue(ex.getMessage().contains("did not run"), ex.getMessage());
            assertFalse(Files.exists(dir.resolve("ran")));
        }
    }

    @Test
    void sandboxCancelStopsOnceAndRefusesLaterExecs() throws Exception {
        Park park = new Park(ExecState.DONE); // never parks a running exec
        park.parked.countDown();
        Environment env = open(park, "sandbox");
        try {
            Execution a = env.start(ExecRequest.of("sleep 3201"));
            Execution b = env.start(ExecRequest.of("sleep 3202"));
            assertTrue(Procs.eventually(5000, () -> !Procs.withArgv("sleep 3202").isEmpty()));
            a.cancel();
            b.cancel();
            assertEquals(130, a.await().exitCode());
            assertEquals(130, b.await().exitCode());
            assertTrue(Procs.eventually(5000, () -> park.closes.get() == 1));
            assertThrows(dev.airlock.EnvironmentClosedException.class, () -> env.exec(ExecRequest.of("true")));
        } finally {
            env.close();
        }
        assertEquals(1, park.closes.get(), "stopped " + park.closes.get() + " times");
    }

    @Test
    void randomizedCancelsAndClosesOnTheRealBackend() throws Exception {
        Random random = new Random(42);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            for (int round = 0; round < 40; round++) {
                Park none = new Park(ExecState.DONE);
                none.parked.countDown();
                Environment env = open(none, random.nextBoolean() ? "exec" : "sandbox");
                String staging = env.target().stagingDir();
                String privateDir = env.target().privateDir();
                Path marker = dir.resolve("r" + round);
                Files.createDirectories(marker);
                List<Execution> execs = new CopyOnWriteArrayList<>();
                List<Future<?>> work = new java.util.ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    int n = i;
                    work.add(pool.submit(() -> {
                        try {
                            execs.add(env.start(ExecRequest.builder("cat > " + marker.resolve("f" + n))
                                    .stdin(Payload.ofUtf8("payload " + n)).build()));
                        } catch (dev.airlock.EnvironmentClosedException ignored) {
                            // close won the race: nothing was started
                        }
                    }));
                }
                Thread.sleep(random.nextInt(30));
                for (Execution e : execs) {
                    if (random.nextBoolean()) {
                        pool.submit(e::cancel);
                    }
                }
                Thread.sleep(random.nextInt(30));
                env.close();
                for (Future<?> f : work) {
                    f.get(30, TimeUnit.SECONDS);
                }
                for (Execution e : execs) {
                    assertTrue(e.isDone(), "an exec outlived close");
                    try {
                        ExecResult r = e.await();
                        if (r.cancelled() && r.duration().isZero()) {
                            // never dispatched: the command never ran
                        }
                    } catch (dev.airlock.AirlockException ignored) {
                        // closed under it: an error, never a hang
                    }
                }
                assertEquals(1, none.closes.get(), "round " + round + " stopped " + none.closes.get() + " times");
                assertFalse(Files.exists(Path.of(staging)), "round " + round + " left its staging dir");
                assertFalse(Files.exists(Path.of(privateDir)));
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
