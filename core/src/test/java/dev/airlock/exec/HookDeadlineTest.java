package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.StdinMode;
import dev.airlock.exec.HostBackend.Fault;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The core never waits on a hook past its deadline: a stuck hook is interrupted then, and the core goes on. */
class HookDeadlineTest {
    @TempDir
    Path dir;

    private HostBackend b;

    @AfterEach
    void cleanUp() {
        if (b != null) {
            b.release.countDown();
            b.env.close();
            b.launched.forEach(Process::destroyForcibly);
        }
    }

    @Test
    void aKillHookStuckPastItsDeadlineIsInterrupted() throws Exception {
        b = new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, true, List.of());
        b.kill = Fault.STALL;
        Optional<ExecResult> r = b.start(ExecRequest.builder("sleep 30").timeout(Duration.ofMillis(500)).build())
                .await(Duration.ofSeconds(20));
        assertTrue(r.isPresent() && r.get().timedOut(), "no timely timeout result");
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!b.interrupted.contains("kill")) {
            assertTrue(System.nanoTime() < until, "the stuck kill hook was never interrupted at its deadline");
            Thread.sleep(20);
        }
    }

    /**
     * A hook that failed before its deadline leaves no interrupt behind: the thread that called it
     * is not interrupted at the deadline, long after it went on to other work.
     */
    @Test
    void aHookThatFailedIsNotInterruptedAtItsDeadlineLater() throws Exception {
        // the kill hooks' bound is the grace plus the slack: 200 ms
        b = new HostBackend(HostBackend.settings(dir, "airlock.kill.grace", "100ms", "airlock.kill.slack", "100ms"),
                StdinMode.PIPE, true, List.of());
        b.kill = Fault.FAIL;
        java.io.IOException x = assertThrows(java.io.IOException.class,
                () -> b.env.hooks().kill(null, java.util.OptionalLong.of(1), false));
        assertEquals("kill failed on request", x.getMessage());
        try {
            Thread.sleep(700);
        } catch (InterruptedException e) {
            throw new AssertionError("the failed hook's deadline interrupted its caller afterwards", e);
        }
        assertFalse(Thread.currentThread().isInterrupted());
    }

    /** A kill still running when the environment closed (no alarm can be set any more) fails with its own error. */
    @Test
    void aHookCalledAfterCloseFailsWithItsOwnError() {
        b = new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, true, List.of());
        b.env.close();
        b.kill = Fault.FAIL;
        java.io.IOException x = assertThrows(java.io.IOException.class,
                () -> b.env.hooks().kill(null, java.util.OptionalLong.of(1), false));
        assertEquals("kill failed on request", x.getMessage());
    }
    /**
     * A checked exception a hook throws undeclared (OkHttp's InterruptedException at its deadline)
     * reaches the core as the IOException every caller handles, the interrupt as an interrupted I/O;
     * an Error passes unchanged.
     */
    @Test
    void aHookThrowingAnUndeclaredCheckedExceptionFailsWithAnIOException() {
        b = new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, true, List.of());
        InterruptedException sneaky = new InterruptedException("okhttp");
        b.removeThrows.set(sneaky);
        java.io.IOException x = assertThrows(java.io.InterruptedIOException.class, () -> b.env.hooks().remove("/nonexistent/a"));
        assertTrue(x.getCause() == sneaky, "the cause was lost");
        java.util.concurrent.TimeoutException other = new java.util.concurrent.TimeoutException("other");
        b.removeThrows.set(other);
        x = assertThrows(java.io.IOException.class, () -> b.env.hooks().remove("/nonexistent/b"));
        assertFalse(x instanceof java.io.InterruptedIOException, "a timeout is no interrupt");
        assertTrue(x.getCause() == other, "the cause was lost");
        StackOverflowError error = new StackOverflowError();
        b.removeThrows.set(error);
        assertTrue(assertThrows(StackOverflowError.class, () -> b.env.hooks().remove("/nonexistent/c")) == error);
    }
}
