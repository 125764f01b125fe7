package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The caller's own streams: output sinks hold everything once the exec returned (they are flushed),
 * and a stdin source is closed by then, on every stdin route.
 */
class CallerStreamsTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();

    private HostBackend open(StdinMode mode) {
        HostBackend b = new HostBackend(HostBackend.settings(dir), mode, mode == StdinMode.PIPE, List.of());
        opened.add(b);
        return b;
    }


    @Test
    void bufferedSinksHoldAllTheOutputWhenTheExecReturns() {
        HostBackend b = open(StdinMode.PIPE);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        ExecResult r = b.exec(ExecRequest.builder("printf out; printf err >&2")
                .output(new BufferedOutputStream(out, 1 << 16), new BufferedOutputStream(err, 1 << 16)).build());
        assertEquals(0, r.exitCode());
        assertEquals("out", out.toString(StandardCharsets.UTF_8), "stdout's sink was not flushed");
        assertEquals("err", err.toString(StandardCharsets.UTF_8), "stderr's sink was not flushed");
    }

    @Test
    void aStdinSourceIsClosedWhenTheExecReturnsOnEveryRoute() {
        for (StdinMode mode : List.of(StdinMode.PIPE, StdinMode.PAYLOAD)) {
            HostBackend b = open(mode);
            for (boolean knownLength : new boolean[] {true, false}) {
                AtomicBoolean closed = new AtomicBoolean();
                InputStream source = new ByteArrayInputStream("in\n".getBytes(StandardCharsets.UTF_8)) {
                    @Override
                    public void close() throws IOException {
                        closed.set(true);
                        super.close();
                    }
                };
                Payload p = knownLength ? Payload.ofStream(source, 3) : Payload.ofStream(source);
                ExecResult r = b.exec(ExecRequest.builder("cat").stdin(p).build());
                assertEquals("in\n", r.stdout().text(), mode + ", known length " + knownLength);
                assertTrue(closed.get(), "the stdin source is still open after the exec returned: " + mode
                        + ", known length " + knownLength);
            }
        }
    }

    /** A stdin source that takes a moment to close is closed by the time the exec returns: the exec waits for its input's end. */
    @Test
    void aStdinSourceSlowToCloseIsClosedWhenTheExecReturns() {
        HostBackend b = open(StdinMode.PIPE);
        AtomicBoolean closed = new AtomicBoolean();
        InputStream source = new ByteArrayInputStream("in\n".getBytes(StandardCharsets.UTF_8)) {
            @Override
            public void close() throws IOException {
                try {
                    Thread.sleep(500); // a network source saying goodbye
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                closed.set(true);
                super.close();
            }
        };
        ExecResult r = b.exec(ExecRequest.builder("cat").stdin(Payload.ofStream(source)).build());
        assertEquals("in\n", r.stdout().text());
        assertTrue(closed.get(), "the exec returned while its stdin source was still being closed");
    }

    /** No stdin given: a command that reads it sees its end at once (the core closes the pipe), on every route. */
    @Test
    void withoutStdinACommandThatReadsItSeesItsEnd() throws Exception {
        for (StdinMode mode : List.of(StdinMode.PIPE, StdinMode.PAYLOAD)) {
            HostBackend b = open(mode);
            dev.airlock.Execution e = b.start(ExecRequest.of("cat; echo ended"));
            java.util.Optional<ExecResult> r = e.await(java.time.Duration.ofSeconds(8));
            assertTrue(r.isPresent(), "a command reading a stdin nobody gave never saw its end: " + mode);
            assertEquals("ended\n", r.get().stdout().text());
        }
    }

    /** Output past the heap part goes to a spill file; every byte of it, the last buffer's too, is in the result. */
    @Test
    void spilledOutputIsWholeOnBothStreams() {
        HostBackend b = open(StdinMode.PIPE);
        byte[] data = new byte[3_000_000 + 12_345];
        new java.util.Random(11).nextBytes(data);
        ExecResult r = b.exec(ExecRequest.builder("tee /dev/stderr").stdin(Payload.of(data)).build());
        assertEquals(0, r.exitCode());
        org.junit.jupiter.api.Assertions.assertArrayEquals(data, r.stdout().bytes(), "stdout");
        org.junit.jupiter.api.Assertions.assertArrayEquals(data, r.stderr().bytes(), "stderr");
    }

    /** With the caller's sinks the result's outputs are empty, never null. */
    @Test
    void withSinksTheResultsOutputsAreEmpty() {
        HostBackend b = open(StdinMode.PIPE);
        ExecResult r = b.exec(ExecRequest.builder("echo out; echo err >&2")
                .output(new ByteArrayOutputStream(), new ByteArrayOutputStream()).build());
        assertEquals(0, r.stdout().bytes().length);
        assertEquals(0, r.stderr().bytes().length);
    }

    /** A caller's sink that fails is the exec's error, naming the stream; after a cancel the cancel is the answer. */
    @Test
    void aFailingSinkIsTheExecsErrorNamingItsStream() throws Exception {
        HostBackend b = open(StdinMode.PIPE);
        java.io.OutputStream broken = new java.io.OutputStream() {
            @Override
            public void write(int c) throws IOException {
                throw new IOException("disk full");
            }
        };
        dev.airlock.BackendException out = org.junit.jupiter.api.Assertions.assertThrows(dev.airlock.BackendException.class,
                () -> b.exec(ExecRequest.builder("echo out").output(broken, new ByteArrayOutputStream()).build()));
        assertTrue(out.getMessage().contains("stdout to the caller's stream failed: disk full"), out.getMessage());
        dev.airlock.BackendException err = org.junit.jupiter.api.Assertions.assertThrows(dev.airlock.BackendException.class,
                () -> b.exec(ExecRequest.builder("echo err >&2").output(new ByteArrayOutputStream(), broken).build()));
        assertTrue(err.getMessage().contains("stderr to the caller's stream failed: disk full"), err.getMessage());
        dev.airlock.Execution e = b.start(ExecRequest.builder("echo out; exec sleep 30").output(broken, broken).build());
        Thread.sleep(300);
        e.cancel();
        java.util.Optional<ExecResult> r = e.await(java.time.Duration.ofSeconds(8));
        assertTrue(r.isPresent() && r.get().cancelled(), "a cancelled exec whose sink failed is answered as cancelled");
    }

    /** A command that exits without reading its stdin: the source is closed by the time the exec returns. */
    @Test
    void aStdinSourceTheCommandNeverReadIsClosedWhenTheExecReturns() {
        HostBackend b = open(StdinMode.PIPE);
        AtomicBoolean closed = new AtomicBoolean();
        InputStream endless = new InputStream() {
            @Override
            public int read() {
                return 'x';
            }

            @Override
            public int read(byte[] buf, int off, int len) {
                java.util.Arrays.fill(buf, off, off + len, (byte) 'x');
                return len;
            }

            @Override
            public void close() {
                closed.set(true);
            }
        };
        ExecResult r = b.exec(ExecRequest.builder("exit 3").stdin(Payload.ofStream(endless)).build());
        assertEquals(3, r.exitCode());
        assertTrue(closed.get(), "the unread stdin source was still open when the exec returned");
    }

    /** The user's command runs in the target's shell (bash here), Airlock's own scripts in sh. */
    @Test
    void theCommandRunsInTheTargetsShell() {
        HostBackend b = open(StdinMode.PIPE);
        org.junit.jupiter.api.Assumptions.assumeTrue(b.target().shell().endsWith("bash"), "the target's shell is not bash");
        ExecResult r = b.exec(ExecRequest.of("[[ 1 == 1 ]] && echo $BASH_VERSION"));
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertTrue(!r.stdout().text().isBlank(), "not run by bash");
    }
}
