package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.StdinMode;
import dev.airlock.session.Session;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A session's interrupted exec waits out the environment's whole stop bound, as a plain exec does
 * ({@code CoreEnvironmentTest#anInterruptedExecWaitsOutTheWholeStopBound}). The session once had a
 * fixed 30 s of its own: with a stop bound past that (a slack of 31 s and a kill that never
 * answers), its caller got "did not stop after the interrupt" while the core was still within its
 * bound. Slow by design (over 30 s), so it is kept out of PIT's target tests.
 */
class SessionInterruptBoundTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();

    @Test
    void anInterruptedSessionExecWaitsOutTheWholeStopBound() throws Exception {
        HostBackend b = opened.add(new HostBackend(HostBackend.settings(dir, "airlock.kill.slack", "31s"),
                StdinMode.PIPE, true, List.of()));
        b.kill = HostBackend.Fault.STALL_UNINTERRUPTIBLY;
        Session session = b.env.session();
        ExecResult[] result = new ExecResult[1];
        Throwable[] thrown = new Throwable[1];
        boolean[] flagged = new boolean[1];
        Thread caller = new Thread(() -> {
            try {
                result[0] = session.exec(ExecRequest.of("sleep 60"));
            } catch (Throwable t) {
                thrown[0] = t;
            }
            flagged[0] = Thread.currentThread().isInterrupted();
        });
        caller.start();
        try {
            b.awaitLaunched();
            caller.interrupt();
            caller.join(HostBackend.HANG.toMillis() + 60_000);
            assertFalse(caller.isAlive(), "an interrupted session exec did not return");
            assertEquals(null, thrown[0], "the interrupted session exec failed while the core was still within its stop bound");
            assertTrue(result[0] != null && result[0].cancelled(), String.valueOf(result[0]));
            assertTrue(flagged[0], "the caller's interrupt was swallowed");
        } finally {
            b.release.countDown();
        }
    }
}
