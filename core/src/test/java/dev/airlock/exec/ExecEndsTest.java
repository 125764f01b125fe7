package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.StagingException;
import dev.airlock.StdinMode;
import dev.airlock.event.AuditEvent;
import dev.airlock.event.ExecListener;
import dev.airlock.event.ExecState;
import dev.airlock.event.ExecTransition;
import dev.airlock.exec.HostBackend.Fault;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How each exec ends and what a caller and a listener see of it: results, audit events, error
 * messages, and what is left behind, driven through the real core on host processes.
 */
class ExecEndsTest {
    private static final Duration HANG = Duration.ofSeconds(8);

    @TempDir
    Path dir;

    private final List<AuditEvent> events = new CopyOnWriteArrayList<>();
    private final List<ExecTransition> transitions = new CopyOnWriteArrayList<>();
    private final List<HostBackend> opened = new ArrayList<>();

    private final ExecListener listener = new ExecListener() {
        @Override
        public void onTransition(ExecTransition t) {
            if (!t.internal()) {
                transitions.add(t);
            }
        }

        @Override
        public void onEvent(AuditEvent e) {
            events.add(e);
        }
    };

    private HostBackend open(StdinMode mode, boolean nativeEnv, String... more) {
        HostBackend b = new HostBackend(HostBackend.settings(dir, more), mode, nativeEnv, List.of(listener));
        opened.add(b);
        return b;
    }

    @AfterEach
    void cleanUp() {
        for (HostBackend b : opened) {
            b.release.countDown();
            b.env.close();
            b.launched.forEach(Process::destroyForcibly);
        }
    }

    /** The exec events so far, once at least {@code n} came (the event follows the result by a moment). */
    private List<AuditEvent> execEvents(int n) throws InterruptedException {
        long until = System.nanoTime() + HANG.toNanos();
        while (true) {
            List<AuditEvent> ev = events.stream().filter(e -> e.type().equals("exec")).toList();
            if (ev.size() >= n || System.nanoTime() > until) {
                return ev;
            }
            Thread.sleep(10);
        }
    }

    private List<String> staged(HostBackend b) throws IOException {
        Path staging = Path.of(b.target().stagingDir());
        if (!Files.isDirectory(staging)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(staging)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".airlock-")).toList();
        }
    }

    private static ExecResult within(Execution e) throws InterruptedException {
        return HostBackend.within(e);
    }

    @Test
    void aFinishedCommandIsOneAuditEventWithItsFacts() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        events.clear();
        b.env.files().write(dir.resolve("f").toString(), "x".getBytes()); // Airlock's own execs: no exec event
        ExecResult r = b.exec(ExecRequest.of("echo hi; exit 3"));
        assertEquals(3, r.exitCode());
        assertEquals("hi\n", r.stdout().text());
        b.exec(ExecRequest.of("true"));
        List<AuditEvent> ev = execEvents(2);
        assertEquals(2, ev.size(), "one exec event per user command, none for the core's own scripts: " + events);
        AuditEvent e = ev.get(0);
        assertEquals("echo hi; exit 3", e.subject());
        assertEquals(3, e.fields().get("exit"));
        assertEquals(false, e.fields().get("timedOut"));
        assertEquals(false, e.fields().get("cancelled"));
        assertEquals(0L, e.fields().get("stdoutDropped"));
        assertTrue(e.fields().containsKey("durationMs"));
    }

    @Test
    void aTimedOutCommandSaysSoInItsResultAndItsEvent() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        ExecResult r = b.exec(ExecRequest.builder("echo started; exec sleep 30").timeout(Duration.ofMillis(500)).build());
        assertEquals(ExecResult.EXIT_TIMEOUT, r.exitCode());
        assertTrue(r.timedOut());
        assertFalse(r.cancelled());
        assertEquals("started\n", r.stdout().text(), "output before the timeout is kept");
        assertEquals(true, execEvents(1).get(0).fields().get("timedOut"));
        assertEquals(List.of(ExecState.DONE), transitions.stream().map(ExecTransition::to).filter(ExecState::isTerminal).toList());
        assertTrue(transitions.stream().anyMatch(t -> t.to() == ExecState.KILLING), "a timeout after dispatch is a kill");
    }

    @Test
    void aCancelledCommandExits130AndIsNotTimedOut() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        Execution e = b.start(ExecRequest.of("echo started; exec sleep 30"));
        long until = System.nanoTime() + HANG.toNanos();
        while (b.launched.isEmpty()) {
            assertTrue(System.nanoTime() < until, "never launched");
            Thread.sleep(10);
        }
        e.cancel();
        ExecResult r = within(e);
        assertEquals(ExecResult.EXIT_CANCELLED, r.exitCode());
        assertTrue(r.cancelled());
        assertFalse(r.timedOut());
        assertFalse(HostBackend.alive(b.launched.get(0).pid()), "the cancelled command still runs");
        assertEquals(true, execEvents(1).get(0).fields().get("cancelled"));
    }

    @Test
    void aFailureIsAnErrorEventNamingItsKind() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        b.launch = Fault.FAIL;
        BackendException x = assertThrows(BackendException.class, () -> b.exec(ExecRequest.of("echo ran")));
        assertTrue(x.getMessage().startsWith("could not start the command on host: launch failed on request"), x.getMessage());
        List<AuditEvent> ev = execEvents(1);
        assertEquals(1, ev.size(), events.toString());
        assertEquals(x.kind(), ev.get(0).fields().get("error"));
        assertEquals(x.getMessage(), ev.get(0).fields().get("message"));
    }

    @Test
    void aStagingFailureSaysWhatCouldNotBeStagedAndWhere() throws Exception {
        HostBackend b = open(StdinMode.PAYLOAD, true);
        b.stage = Fault.FAIL;
        StagingException x = assertThrows(StagingException.class,
                () -> b.exec(ExecRequest.builder("cat").stdin(Payload.ofUtf8("x")).build()));
        assertEquals("could not stage the command's input on the host target: stage failed on request", x.getMessage());
        assertEquals(List.of(), staged(b));
    }

    @Test
    void aVanishedStagedInputIsAStagingErrorWithTheShellsReason() throws Exception {
        HostBackend b = open(StdinMode.PAYLOAD, true);
        b.noise = "Welcome to the host!\n"; // a login shell's, on stderr before the shell's reason
        // The staged stdin is taken away between staging and the prefix that opens it.
        b.slowStart = 0.5;
        Execution e = b.start(ExecRequest.builder("echo ran").stdin(Payload.ofUtf8("x")).build());
        long until = System.nanoTime() + HANG.toNanos();
        while (b.launched.isEmpty()) {
            assertTrue(System.nanoTime() < until, "never launched");
            Thread.sleep(10);
        }
        try (Stream<Path> s = Files.list(Path.of(b.target().stagingDir()))) {
            for (Path p : s.toList()) {
                Files.delete(p);
            }
        }
        StagingException x = assertThrows(StagingException.class, e::await);
        assertTrue(x.getMessage().startsWith("the staged input could not be opened on the host target, so the command"
                + " did not run: "), x.getMessage());
        assertTrue(x.getMessage().length() > "the staged input could not be opened on the host target, so the command did not run: ".length(),
                "the shell's own reason is kept: " + x.getMessage());
        assertFalse(x.getMessage().contains("Welcome"), "the startup noise was given as the reason: " + x.getMessage());
    }

    @Test
    void aCommandsOwnExit201IsNotAStagingError() throws Exception {
        HostBackend b = open(StdinMode.PAYLOAD, false);
        ExecResult r = b.exec(ExecRequest.builder("cat >/dev/null; echo err >&2; exit 201").stdin(Payload.ofUtf8("x")).build());
        assertEquals(201, r.exitCode());
        assertEquals("err\n", r.stderr().text());
    }

    /** A capture limit of 0 keeps none of the output and counts all of it as dropped: 0 is a limit, not the default. */
    @Test
    void aCaptureLimitOfZeroKeepsNothingAndCountsItAllAsDropped() {
        HostBackend b = open(StdinMode.PIPE, true);
        ExecResult r = b.exec(ExecRequest.builder("printf 12345; printf 678 >&2").captureLimit(0).build());
        assertEquals(0, r.stdout().size());
        assertEquals(5, r.stdoutDropped());
        assertEquals(0, r.stderr().size());
        assertEquals(3, r.stderrDropped());
    }

    @Test
    void aBrokenStdinSourceFailsTheExecAndKillsTheCommandBeforeItSeesEndOfInput() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true);
        Path done = dir.resolve("done");
        InputStream breaks = new InputStream() {
            private int left = 70_000;

            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0];
            }

            @Override
            public int read(byte[] buf, int off, int len) throws IOException {
                if (left == 0) {
                    throw new IOException("the source broke");
                }
                int n = Math.min(len, left);
                left -= n;
                return n;
            }
        };
        BackendException x = assertThrows(BackendException.class, () -> b.exec(ExecRequest.builder("cat > /dev/null && touch " + done)
                .stdin(Payload.ofStream(breaks)).build()));
        assertEquals("reading the stdin payload failed, so the command was killed: the source broke", x.getMessage());
        assertFalse(Files.exists(done), "the command took a broken payload's first part for the whole");
    }

    @Test
    void aCancelOfAnotherExecNeverStopsTheSandboxButOfALiveOneDoes() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true, "airlock.cancel", "sandbox");
        Execution first = b.start(ExecRequest.of("true"));
        within(first);
        first.cancel();
        assertEquals(0, b.stops.get(), "cancelling a finished exec stopped the sandbox");
        Execution live = b.start(ExecRequest.of("exec sleep 30"));
        live.cancel();
        assertTrue(within(live).cancelled());
        long until = System.nanoTime() + HANG.toNanos();
        while (b.stops.get() == 0) {
            assertTrue(System.nanoTime() < until, "a sandbox-wide cancel of a live exec never stopped the sandbox");
            Thread.sleep(10);
        }
        assertEquals(1, b.stops.get());
    }

    @Test
    void theEnvironmentsOwnReadsNeverStopTheSandboxWhenCancelled() throws Exception {
        HostBackend b = open(StdinMode.PIPE, true, "airlock.cancel", "sandbox");
        String f = dir.resolve("big").toString();
        b.env.files().write(f, new byte[3 << 20]);
        try (InputStream in = b.env.files().read(f)) {
            assertEquals(0, in.read()); // then closed early: its internal exec is cancelled
        }
        assertEquals("ok\n", b.exec(ExecRequest.of("echo ok")).stdout().text(), "an internal cancel stopped the sandbox");
        assertEquals(0, b.stops.get());
    }
}
