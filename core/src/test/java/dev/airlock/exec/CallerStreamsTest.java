package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
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

    private final List<HostBackend> opened = new ArrayList<>();

    private HostBackend open(StdinMode mode) {
        HostBackend b = new HostBackend(Settings.of("airlock.container", "no", "airlock.private-dir.base", dir.toString(),
                "airlock.kill.grace", "300ms"), mode, mode == StdinMode.PIPE, List.of());
        opened.add(b);
        return b;
    }

    @AfterEach
    void cleanUp() {
        for (HostBackend b : opened) {
            b.env.close();
        }
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
}
