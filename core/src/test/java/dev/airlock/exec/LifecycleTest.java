package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Closing an environment ({@link Lifecycle}) and what it leaves behind: its worker threads end, the
 * audit log is complete and released, the backend is closed once however often the environment is,
 * stopped execs are answered, native writes and spill files end with it, and the JVM lets go of it.
 */
class LifecycleTest {
    private static final Duration HANG = HostBackend.HANG;

    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();

    private HostBackend open(String... more) {
        HostBackend b = new HostBackend(HostBackend.settings(dir, more), StdinMode.PIPE, true, List.of());
        opened.add(b);
        return b;
    }


    @Test
    void closeEndsTheEnvironmentsThreads() throws Exception {
        HostBackend b = open();
        b.exec(ExecRequest.of("true"));
        long before = threads(b);
        assertTrue(before > 0, "the environment runs worker threads");
        b.env.close();
        long until = System.nanoTime() + HANG.toNanos();
        while (threads(b) > 0) {
            assertTrue(System.nanoTime() < until, threads(b) + " of the environment's threads outlived close()");
            Thread.sleep(20);
        }
    }

    @Test
    void closeIsTheAuditLogsLastLineAndReleasesTheFile() throws Exception {
        Path audit = dir.resolve("audit.jsonl");
        HostBackend b = open("airlock.audit.file", audit.toString());
        b.exec(ExecRequest.of("true"));
        assertTrue(holds(audit), "the audit log is open while the environment is");
        b.env.close();
        List<String> lines = Files.readAllLines(audit);
        assertTrue(lines.get(lines.size() - 1).contains("\"close\""), "last line: " + lines.get(lines.size() - 1));
        assertFalse(holds(audit), "the audit log's file stayed open after close()");
    }

    @Test
    void theBackendIsClosedOnceHoweverOftenTheEnvironmentIs() {
        HostBackend b = open();
        b.env.close();
        b.env.close();
        b.closeFromHook();
        assertEquals(1, b.closes.get());
        assertTrue(b.env.isClosed());
    }

    private static long threads(HostBackend b) {
        // Only this environment's: an earlier test's environment may still be ending its own.
        String prefix = b.env.workers().threadPrefix();
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix) && t.isAlive()).count();
    }

    private static boolean holds(Path file) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.anyMatch(fd -> {
                try {
                    return Files.readSymbolicLink(fd).equals(file);
                } catch (IOException e) {
                    return false; // closed meanwhile
                }
            });
        }
    }

    /** The JVM's shutdown hook closes the environment: closed, and refusing new execs, as after close(). */
    @Test
    void theShutdownHooksCloseLeavesTheEnvironmentClosed() {
        HostBackend b = open();
        b.closeFromHook();
        assertTrue(b.env.isClosed());
        assertEquals(1, b.closes.get());
        org.junit.jupiter.api.Assertions.assertThrows(dev.airlock.EnvironmentClosedException.class,
                () -> b.exec(ExecRequest.of("true")));
    }

    /**
     * The JVM holds an open environment's shutdown hook, so an exit closes it, and lets go of it at
     * close, so a closed environment is not kept alive (an agent opens many in one JVM).
     */
    @Test
    void theShutdownHookIsHeldWhileOpenAndReleasedByClose() {
        HostBackend b = open();
        Thread hook = b.env.lifecycle().shutdownHook();
        assertTrue(Runtime.getRuntime().removeShutdownHook(hook), "an open environment has no shutdown hook");
        Runtime.getRuntime().addShutdownHook(hook);
        b.env.close();
        assertFalse(Runtime.getRuntime().removeShutdownHook(hook), "close left the shutdown hook registered");
    }

    /** close() returns once every exec it stopped has its result, even one that ignores SIGTERM. */
    @Test
    void closeReturnsWithEveryExecItStoppedAnswered() throws Exception {
        HostBackend b = open("airlock.kill.grace", "1s");
        Path ready = dir.resolve("ready");
        Execution e = b.start(ExecRequest.of("trap '' TERM; touch '" + ready + "'; sleep 30"));
        long until = System.nanoTime() + HANG.toNanos();
        while (!Files.exists(ready)) {
            assertTrue(System.nanoTime() < until, "the command never started");
            Thread.sleep(10);
        }
        b.env.close();
        assertTrue(e.isDone(), "close() returned before the exec it stopped had its result");
        assertTrue(HostBackend.within(e).cancelled());
    }

    /** A native write still reading its caller's source ends with close, as a shell write's command is killed. */
    @Test
    void closeEndsANativeWriteStillReadingItsSource() throws Exception {
        HostBackend b = open();
        AtomicBoolean testOver = new AtomicBoolean();
        InputStream endless = new InputStream() {
            @Override
            public int read() {
                return testOver.get() ? -1 : 7;
            }
        };
        NativeWrites.Write w = b.env.nativeWrites().begin(Payload.ofStream(endless), "the test write");
        CompletableFuture<IOException> reading = new CompletableFuture<>();
        Thread writer = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = w.payload().open()) {
                while (in.read(buf) != -1) {
                    // as a backend's upload reads its source
                }
                reading.complete(null);
            } catch (IOException ex) {
                reading.complete(ex);
            } finally {
                w.close();
            }
        }, "close-test-native-write");
        writer.start();
        try {
            b.env.close();
            IOException ended = reading.get(5, TimeUnit.SECONDS);
            assertTrue(ended != null && w.aborted(), "the write ended without close aborting it");
        } catch (TimeoutException stillReading) {
            throw new AssertionError("close() left a native write reading its source");
        } finally {
            testOver.set(true);
            writer.join(HANG.toMillis());
        }
    }

    /** Spill files no result took (an exec that failed or was answered early) are deleted by close. */
    @Test
    void closeDeletesTheSpillFilesNoResultTook() {
        HostBackend b = open();
        Path taken = b.env.spills().newFile();
        Path orphan = b.env.spills().newFile();
        b.env.spills().delivered(taken);
        try {
            b.env.close();
            assertFalse(Files.exists(orphan), "a spill file no result took outlived close()");
            assertTrue(Files.exists(taken), "close() deleted a spill file a result owns (its output is read after close)");
        } finally {
            try {
                Files.deleteIfExists(taken);
                Files.deleteIfExists(orphan);
            } catch (IOException ignored) {
                // in the JVM's temp dir, 0600 and randomly named
            }
        }
    }
    /**
     * A launch still in flight when close runs (a backend slow to start the command, deaf to the
     * interrupt): close returns only once it returned and the command it started was killed, so
     * nothing of the environment runs on after close.
     */
    @Test
    void closeWaitsForALaunchInFlightAndKillsWhatItStarted() throws Exception {
        HostBackend b = open();
        b.launch = HostBackend.Fault.STALL_UNINTERRUPTIBLY;
        dev.airlock.Execution e = b.start(dev.airlock.ExecRequest.of("sleep 30"));
        HostBackend.await(b.stalled);
        Thread release = new Thread(() -> {
            try {
                Thread.sleep(1500); // past the stop bound: the caller has its result by then
            } catch (InterruptedException ignored) {
                return;
            }
            b.release.countDown();
        });
        release.start();
        b.env.close();
        List<Process> started = List.copyOf(b.launched);
        release.join();
        assertEquals(1, started.size(), "close returned before the launch in flight did");
        assertTrue(!HostBackend.alive(started.get(0).pid()), "the command launched while close ran outlived it");
        assertTrue(HostBackend.within(e).cancelled());
    }
}
