package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.Capabilities;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.OutputTransport;
import dev.airlock.Payload;
import dev.airlock.PayloadStrategy;
import dev.airlock.RemoteFiles;
import dev.airlock.StdinMode;
import dev.airlock.settings.Settings;
import dev.airlock.spi.BulkInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Output transport FILES and streamed PAYLOAD stdin, through the real core on host processes: the
 * bytes arrive exactly, the cap holds, nothing stays on the target after an end, a timeout or a
 * cancel, and streamed stdin needs no staging and has no staging cap. Bounds only detect hangs.
 */
class OutputTransportTest {
    private static final Duration HANG = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private final List<HostBackend> opened = new ArrayList<>();

    private HostBackend open(Capabilities caps, String... more) {
        HostBackend b = new HostBackend(HostBackend.settings(dir, more), caps, List.of());
        opened.add(b);
        return b;
    }

    private HostBackend files(String... more) {
        return open(Capabilities.pipe().withOutputTransport(OutputTransport.FILES), more);
    }

    private HostBackend streamed(String... more) {
        return open(Capabilities.builder().stdinMode(StdinMode.PAYLOAD).payloadStrategy(PayloadStrategy.STREAMED)
                .nativeEnv(true).build(), more);
    }

    @AfterEach
    void cleanUp() {
        for (HostBackend b : opened) {
            b.env.close();
            b.launched.forEach(Process::destroyForcibly);
        }
    }

    private static List<Path> outputFiles(HostBackend b) throws IOException {
        Path staging = Path.of(b.target().stagingDir());
        if (!Files.isDirectory(staging)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(staging)) {
            return s.filter(p -> p.getFileName().toString().matches("\\.airlock-(out|err)-.*")).toList();
        }
    }

    private static ExecResult within(Execution e) throws InterruptedException {
        return HostBackend.within(e);
    }

    /** Polls for a state the core reaches in the background; the bound only detects a hang. */
    private static void eventually(String what, java.util.function.BooleanSupplier ok) throws InterruptedException {
        long until = System.nanoTime() + HANG.toNanos();
        while (!ok.getAsBoolean()) {
            assertTrue(System.nanoTime() < until, what);
            Thread.sleep(20);
        }
    }

    // ---- FILES

    @Test
    void filesOutputArrivesByteExactAndTheFilesAreGone() throws Exception {
        HostBackend b = files();
        b.noise = "login banner"; // on the transport, before the record: never output
        ExecResult r = within(b.start(ExecRequest.of("printf 'a\\000b\\377'; printf 'e\\000\\n' >&2; exit 3")));
        assertEquals(3, r.exitCode());
        assertArrayEquals(new byte[] {'a', 0, 'b', (byte) 0xff}, r.stdout().bytes());
        assertArrayEquals(new byte[] {'e', 0, '\n'}, r.stderr().bytes());
        assertEquals(List.of(), outputFiles(b), "the output files stayed on the target");
    }

    @Test
    void filesOutputKeepsTheCapAndCountsTheRest() throws Exception {
        HostBackend b = files("airlock.output.max-bytes", "1000");
        ExecResult r = within(b.start(ExecRequest.of("head -c 5000 /dev/zero; head -c 10 /dev/zero >&2")));
        assertEquals(0, r.exitCode());
        assertEquals(1000, r.stdout().bytes().length);
        assertEquals(4000, r.stdoutDropped());
        assertEquals(10, r.stderr().bytes().length);
        assertEquals(0, r.stderrDropped());
    }

    @Test
    void filesOutputReachesTheCallersStreams() throws Exception {
        HostBackend b = files();
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        ExecResult r = within(b.start(ExecRequest.builder("printf out; printf err >&2").output(out, err).build()));
        assertEquals(0, r.exitCode());
        assertEquals("out", out.toString());
        assertEquals("err", err.toString());
    }

    @Test
    void aTimedOutCommandsOutputFilesAreGoneAndItsOutputSoFarArrives() throws Exception {
        HostBackend b = files();
        ExecResult r = within(b.start(ExecRequest.builder("printf partial; sleep 30").timeout(Duration.ofSeconds(1)).build()));
        assertTrue(r.timedOut());
        assertEquals("partial", r.stdout().text());
        eventually("the output files of a timed-out command stayed", () -> uncheckedFiles(b).isEmpty());
    }

    @Test
    void aCancelledCommandsOutputFilesAreGone() throws Exception {
        HostBackend b = files();
        Execution e = b.start(ExecRequest.of("sleep 30"));
        eventually("the command never started", () -> uncheckedFiles(b).size() == 2);
        e.cancel();
        assertTrue(within(e).cancelled());
        eventually("the output files of a cancelled command stayed", () -> uncheckedFiles(b).isEmpty());
    }

    /** Output files that cannot be read after the command ended (the backend's files API fails): the exec fails saying so. */
    @Test
    void outputThatCannotBeDownloadedFailsTheExecSayingWhy() throws Exception {
        HostBackend b = new HostBackend(HostBackend.settings(dir), Capabilities.pipe().withOutputTransport(OutputTransport.FILES),
                List.of()) {
            @Override
            public Optional<RemoteFiles> files() {
                return super.files().map(UnreadableFiles::new);
            }
        };
        opened.add(b);
        BackendException x = assertThrows(BackendException.class, () -> within(b.start(ExecRequest.of("echo out"))));
        assertEquals("the command ended but its output could not be downloaded from host: java.io.IOException: the file is gone",
                x.getMessage());
    }

    /** The target's files, except that reading one fails as an SDK does (unchecked). */
    private static final class UnreadableFiles extends dev.airlock.spi.ForwardingRemoteFiles {
        UnreadableFiles(RemoteFiles files) {
            super(files);
        }

        @Override
        public InputStream read(String path) {
            throw new java.io.UncheckedIOException(new IOException("the file is gone"));
        }
    }

    @Test
    void aStagingFailureOnFilesOutputSaysWhy() throws Exception {
        HostBackend b = files();
        // A cwd that cannot be entered: its error lands in the output files, its status is 126.
        ExecResult r = within(b.start(ExecRequest.builder("echo ran").cwd(dir.resolve("missing").toString()).build()));
        assertEquals(126, r.exitCode());
        assertTrue(r.stderr().text().contains("missing"), r.stderr().text());
        assertEquals("", r.stdout().text());
    }

    @Test
    void filesOutputWithoutNativeFilesIsRefusedAtOpen() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> new HostBackend(
                Settings.of("airlock.container", "no", "airlock.private-dir.base", dir.toString()),
                Capabilities.pipe().withOutputTransport(OutputTransport.FILES), List.of()) {
            @Override
            public Optional<dev.airlock.RemoteFiles> files() {
                return Optional.empty();
            }
        });
        assertTrue(e.getMessage().contains("files()"), e.getMessage());
    }

    private static List<Path> uncheckedFiles(HostBackend b) {
        try {
            return outputFiles(b);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    // ---- streamed PAYLOAD

    @Test
    void streamedStdinArrivesByteExactInChunksByOffsetWithoutStagingOrCap() throws Exception {
        HostBackend b = streamed("airlock.stdin.max-staged-bytes", "1024");
        byte[] data = new byte[(5 << 19) + 7]; // 2.5 MiB and a bit: three chunks
        new Random(11).nextBytes(data);
        data[0] = 0;
        ExecResult r = within(b.start(ExecRequest.builder("cat").stdin(unknownLength(data)).build()));
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertArrayEquals(data, r.stdout().bytes());
        long next = 0;
        for (long[] c : b.chunks) {
            assertEquals(next, c[0], "a gap or overlap in the offsets");
            assertTrue(c[1] <= dev.airlock.spi.StdinWriter.CHUNK);
            next += c[1];
        }
        assertEquals(data.length, next);
        assertEquals(List.of((long) data.length), b.stdinEnds, "one explicit end with the length");
        assertEquals(List.of(), b.stagedPaths, "streamed stdin was staged");
    }

    @Test
    void streamedEmptyStdinStillEnds() throws Exception {
        HostBackend b = streamed();
        ExecResult r = within(b.start(ExecRequest.builder("wc -c").stdin(Payload.of(new byte[0])).build()));
        assertEquals("0", r.stdout().text().strip());
        assertEquals(List.of(0L), b.stdinEnds);
    }

    /** A command that stops reading its stdin runs on to its own end, as with a pipe's EPIPE: it is not killed. */
    @Test
    void aCommandThatClosesItsStreamedStdinRunsOnToItsEnd() throws Exception {
        HostBackend b = streamed();
        ExecResult r = within(b.start(ExecRequest.builder("exec 0<&-; sleep 0.5; echo done")
                .stdin(Payload.of(new byte[8 << 20])).build()));
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertEquals("done", r.stdout().text().strip());
        assertFalse(r.cancelled() || r.timedOut());
    }

    @Test
    void aBrokenStreamedSourceKillsTheCommandAndSaysSo() throws Exception {
        HostBackend b = streamed();
        BulkInputStream broken = new BulkInputStream() {
            private boolean sent;

            @Override
            public int read(byte[] buf, int off, int len) throws IOException {
                if (!sent) {
                    sent = true;
                    buf[off] = 'x';
                    return 1;
                }
                throw new IOException("the source broke");
            }
        };
        BackendException e = assertThrows(BackendException.class,
                () -> within(b.start(ExecRequest.builder("cat > /dev/null; echo took-it").stdin(Payload.ofStream(broken)).build())));
        assertTrue(e.getMessage().contains("the source broke"), e.getMessage());
        assertFalse(b.stdinEnds.size() > 0, "a broken source was ended as if complete");
    }

    private static Payload unknownLength(byte[] data) {
        InputStream in = new ByteArrayInputStream(data);
        return Payload.ofStream(new BulkInputStream() {
            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return in.read(b, off, len);
            }
        });
    }
}
