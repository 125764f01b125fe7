package dev.airlock.exec;

import dev.airlock.Capabilities;
import dev.airlock.Payload;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.Launch;
import dev.airlock.spi.RawResult;
import dev.airlock.spi.RemoteProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Airlock's own small scripts run straight through launch: their output after their own start
 * line (a random token per run), capped at 1 MiB; every process released; the backend's unset
 * list on a native-env backend; and a caller interrupted mid-run waits (boundedly) for the script's end.
 */
class RawRunsTest {
    private static final Pattern START = Pattern.compile("\\Aprintf '%s\\\\n' '(@airlock-raw:[0-9a-f]+)'\n");
    /** A variable name only this test's backend asks to unset. */
    private static final String EXTRA_UNSET = "AIRLOCK_RAW_RUNS_TEST_UNSET";
    /** A script that blocks in the test's fake {@code waitFor} (see {@link Recording}). */
    private static final String BLOCK = "# raw-runs-test: block\nsleep 60\n";

    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();

    /** A host backend that records its raw launches and releases, and can fake a script's end. */
    static class Recording extends HostBackend {
        // No initialisers: the core launches its probe from the super constructor, before they would run.
        private List<Launch> raw;
        private AtomicInteger released;
        private List<Long> pids;
        /** How the end thread's wait for a blocked script answers: null to block until {@link #endRelease}. */
        volatile Integer endAnswer;
        volatile CountDownLatch callerWaiting;
        volatile CountDownLatch endRelease;
        volatile AtomicBoolean endWaitedOnDaemon;
        volatile AtomicBoolean endCalled;

        Recording(Path dir, boolean nativeEnv) {
            super(HostBackend.settings(dir), Capabilities.pipe().withNativeEnv(nativeEnv), List.of());
        }

        private synchronized void init() {
            if (raw == null) {
                raw = new CopyOnWriteArrayList<>();
                released = new AtomicInteger();
                pids = new CopyOnWriteArrayList<>();
            }
        }

        @Override
        public Set<String> childUnset(Set<String> proposed) {
            Set<String> out = new HashSet<>(proposed);
            out.add(EXTRA_UNSET);
            return out;
        }

        @Override
        public RemoteProcess launch(Launch l, Deadline deadline) throws IOException {
            init();
            RemoteProcess p = super.launch(l, deadline);
            if (!l.script().startsWith("printf '%s\\n' '@airlock-raw:")) {
                return p;
            }
            raw.add(l);
            pids.add(p.processGroup().orElseThrow());
            boolean blocking = l.script().contains(BLOCK);
            return new DelegatingProcess(p) {
                @Override
                public int waitFor() throws InterruptedException {
                    if (!blocking) {
                        return super.waitFor();
                    }
                    if (!Thread.currentThread().getName().equals("airlock-raw-end")) {
                        callerWaiting.countDown();
                        return super.waitFor(); // until the caller is interrupted
                    }
                    endWaitedOnDaemon.set(Thread.currentThread().isDaemon());
                    endCalled.set(true);
                    if (endAnswer != null) {
                        return endAnswer;
                    }
                    endRelease.await();
                    return 0;
                }

                @Override
                public java.util.Optional<dev.airlock.AirlockException> lostReason() {
                    return p.lostReason();
                }

                @Override
                public void release() {
                    released.incrementAndGet();
                }
            };
        }
    }

    private Recording open(boolean nativeEnv) {
        return opened.add(new Recording(dir, nativeEnv));
    }

    @Test
    void theOutputIsWhatFollowsTheStartLine() {
        byte[] mark = "@airlock-raw:4abc".getBytes(StandardCharsets.US_ASCII);
        assertArrayEquals(bytes("out\n"), RawRuns.afterStartLine(bytes("noise without newline@airlock-raw:4abc\nout\n"), "@airlock-raw:4abc"));
        assertArrayEquals(new byte[0], RawRuns.afterStartLine(bytes("@airlock-raw:4abc\n"), "@airlock-raw:4abc"),
                "a script that printed nothing after its start line");
        assertArrayEquals(bytes("no start line"), RawRuns.afterStartLine(bytes("no start line"), "@airlock-raw:4abc"),
                "without the start line, everything must be kept");
        assertArrayEquals(bytes("x"), RawRuns.afterStartLine(bytes("x"), new String(mark, StandardCharsets.US_ASCII)),
                "output shorter than the start line");
    }

    /** Each run's start line carries its own 16-digit token, so no noise can fake it. */
    @Test
    void eachRunsStartLineIsItsOwnToken() throws Exception {
        Recording b = open(false);
        int before = b.raw.size();
        for (int i = 0; i < 6; i++) {
            RawResult r = b.env.runRaw("printf 'run %s' " + i + "\n", null);
            assertEquals(0, r.exit());
            assertEquals("run " + i, new String(r.stdout(), StandardCharsets.UTF_8));
        }
        Set<String> marks = new HashSet<>();
        for (Launch l : b.raw.subList(before, b.raw.size())) {
            Matcher m = START.matcher(l.script());
            assertTrue(m.find(), l.script());
            assertEquals("@airlock-raw:".length() + 16, m.group(1).length(), "a short token: " + m.group(1));
            marks.add(m.group(1));
        }
        assertEquals(6, marks.size(), "two runs shared a start token: " + marks);
    }

    /** Noise a login shell prints before the script (stdout, no final newline) is dropped; stderr is the script's own and the noise. */
    @Test
    void startupNoiseIsDroppedFromTheScriptsOutput() throws Exception {
        Recording b = open(false);
        b.noise = "Welcome alive 4242";
        RawResult r = b.env.runRaw("echo alive 1; echo err >&2; exit 3\n", null);
        assertEquals(3, r.exit());
        assertEquals("alive 1\n", new String(r.stdout(), StandardCharsets.UTF_8));
        assertEquals("Welcome alive 4242err\n", new String(r.stderr(), StandardCharsets.UTF_8));
    }

    @Test
    void outputIsCappedAtOneMebibyteAndEveryProcessIsReleased() throws Exception {
        Recording b = open(false);
        RawResult r = b.env.runRaw("head -c 1100000 /dev/zero | tr '\\0' a; head -c 1100000 /dev/zero | tr '\\0' e >&2\n", null);
        assertEquals(0, r.exit());
        int startLine = "@airlock-raw:".length() + 16 + 1;
        assertEquals((1 << 20) - startLine, r.stdout().length, "stdout beyond 1 MiB was kept, or short of it dropped");
        assertEquals(1 << 20, r.stderr().length);
        assertEquals("a".repeat(100), new String(r.stdout(), 0, 100, StandardCharsets.US_ASCII));
        assertEquals(b.raw.size(), b.released.get(), "a raw run's process was not released");
    }

    /** Input given to a raw run reaches the script whole. */
    @Test
    void stdinReachesTheScript() throws Exception {
        Recording b = open(false);
        byte[] data = new byte[300_000];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) i;
        }
        RawResult r = b.env.runRaw("cat\n", Payload.of(data));
        assertEquals(0, r.exit());
        assertArrayEquals(data, r.stdout());
    }

    /** Only a native-env backend's raw launches carry its unset list; on others the backend's environment does that. */
    @Test
    void theUnsetListGoesWithRawRunsOnANativeEnvBackendOnly() throws Exception {
        Recording nativeEnv = open(true);
        Recording plain = open(false);
        nativeEnv.env.runRaw("true\n", null);
        plain.env.runRaw("true\n", null);
        Launch n = nativeEnv.raw.get(nativeEnv.raw.size() - 1);
        Launch p = plain.raw.get(plain.raw.size() - 1);
        assertTrue(n.unset().contains(EXTRA_UNSET), n.unset().toString());
        assertEquals(Set.of(), p.unset());
        assertTrue(n.internal() && n.pipeStdin() == false && "sh".equals(n.shell()), n.toString());
    }

    /** A caller interrupted while its script runs waits for the script's end before it gives up, its interrupt kept. */
    @Test
    void anInterruptedRunWaitsForTheScriptsEnd() throws Exception {
        Recording b = open(false);
        b.endAnswer = 0;
        Outcome o = interruptedRun(b);
        assertTrue(o.thrown instanceof InterruptedIOException, String.valueOf(o.thrown));
        assertEquals("interrupted while running an internal script", o.thrown.getMessage());
        assertTrue(o.flagged, "the interrupt was swallowed");
        assertTrue(o.endWaited, "the caller gave up without waiting for the script's end");
        assertTrue(b.endWaitedOnDaemon.get(), "the wait for the script's end holds a non-daemon thread (a JVM could not exit)");
    }

    /** ... but not for ever: a script that does not end lets its interrupted caller go (at one second). */
    @Test
    void anInterruptedRunDoesNotWaitForEverForTheScriptsEnd() throws Exception {
        Recording b = open(false);
        b.endAnswer = null;
        try {
            Outcome o = interruptedRun(b);
            assertTrue(o.thrown instanceof InterruptedIOException, String.valueOf(o.thrown));
            assertTrue(o.flagged, "the interrupt was swallowed");
        } finally {
            b.endRelease.countDown();
        }
    }

    private record Outcome(Throwable thrown, boolean flagged, boolean endWaited) {
    }

    private Outcome interruptedRun(Recording b) throws Exception {
        b.callerWaiting = new CountDownLatch(1);
        b.endRelease = new CountDownLatch(1);
        b.endWaitedOnDaemon = new AtomicBoolean();
        b.endCalled = new AtomicBoolean();
        Throwable[] thrown = new Throwable[1];
        boolean[] flagged = new boolean[1];
        boolean[] endWaited = new boolean[1];
        Thread caller = new Thread(() -> {
            try {
                b.env.runRaw(BLOCK, null);
            } catch (Throwable t) {
                thrown[0] = t;
                flagged[0] = Thread.currentThread().isInterrupted();
                endWaited[0] = b.endCalled.get();
            }
        });
        caller.start();
        try {
            assertTrue(b.callerWaiting.await(20, TimeUnit.SECONDS), "the script never ran");
            caller.interrupt();
            caller.join(HostBackend.HANG.toMillis());
            assertFalse(caller.isAlive(), "the interrupted caller never returned");
        } finally {
            for (long pid : b.pids) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
        return new Outcome(thrown[0], flagged[0], endWaited[0]);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** A script whose connection is lost: one line naming where it ran, or the backend's own reason when it knows one. */
    @Test
    void aLostScriptSaysWhereOrWhy() throws Exception {
        Recording b = open(false);
        b.script = HostBackend.Fault.LOSE;
        IOException lost = assertThrows(IOException.class, () -> b.env.runRaw("echo hi\n", null));
        assertEquals("the connection to host was lost while an internal script ran", lost.getMessage());
        b.lostReason = new dev.airlock.BackendException("the sandbox ended (test)");
        dev.airlock.AirlockException why = assertThrows(dev.airlock.AirlockException.class, () -> b.env.runRaw("echo hi\n", null));
        assertEquals("the sandbox ended (test)", why.getMessage());
        b.script = HostBackend.Fault.NONE;
    }

    /** On a backend that takes stdin streamed by offset, a raw run's input goes through its writer; a failing source is refused. */
    @Test
    void streamedInputReachesTheScriptAndAFailingSourceIsRefused() throws Exception {
        HostBackend b = opened.add(new HostBackend(HostBackend.settings(dir), Capabilities.builder().stdinMode(dev.airlock.StdinMode.PAYLOAD)
                .payloadStrategy(dev.airlock.PayloadStrategy.STREAMED).build(), List.of()));
        byte[] data = new byte[200_000];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i % 251);
        }
        int before = b.chunks.size();
        RawResult r = b.env.runRaw("cat\n", Payload.of(data));
        assertEquals(0, r.exit());
        assertArrayEquals(data, r.stdout());
        assertTrue(b.chunks.size() > before, "the input did not go through the backend's stdin writer");
        java.io.InputStream failing = new java.io.InputStream() {
            private int left = 1000;

            @Override
            public int read() throws IOException {
                if (left-- > 0) {
                    return 'x';
                }
                throw new IOException("the source broke");
            }
        };
        IOException e = assertThrows(IOException.class, () -> b.env.runRaw("cat >/dev/null\n", Payload.ofStream(failing)));
        assertTrue(e.getMessage().startsWith("delivering input failed: ") && e.getMessage().contains("the source broke"), e.getMessage());
    }
}
