package dev.airlock.exec;

import dev.airlock.spi.RawResult;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.BackendException;
import dev.airlock.CapturedOutput;
import dev.airlock.ExecRequest;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.spi.StdinWriter;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One launched exec's streams: stdout through the launcher record's parser into a capture or the
 * caller's sink, stderr likewise, and stdin from the caller's payload. After the command ends,
 * {@link #finish} waits for end-of-output up to the output grace, then lets go of the transport.
 * With FILES output the live streams are progress only and the output is downloaded after the end.
 */
final class Capture {
    private static final int HEAP_CAPTURE = 1 << 20;
    private static final int TRANSPORT_ERR = 64 << 10;
    /** How long end-of-output may take to come once the command's leftover tree was killed. */
    private static final Duration AFTER_KILL = Duration.ofMillis(200);

    private final CoreEnvironment env;
    private final ExecRequest request;
    private final RemoteProcess process;
    private final OutputFiles files;
    private final LaunchRecordStream records;
    private final OutputCapture outCap;
    private final OutputCapture errCap;
    /** FILES: the transport's stderr (staging errors come there, before the redirect). */
    private final OutputCapture transportErr;
    private final OutputPump outPump;
    private final OutputPump errPump;
    private StdinPump stdin;
    private IOException downloadFailure;

    /** {@code files} is null for STREAM output; else the output comes from those files after the end. */
    Capture(CoreEnvironment env, ExecRequest request, RemoteProcess process, String nonce, OutputFiles files) {
        this.env = env;
        this.request = request;
        this.process = process;
        this.files = files;
        long cap = request.captureLimit() >= 0 ? request.captureLimit() : env.config().outputCap();
        this.outCap = request.stdoutSink().isPresent() ? null : new OutputCapture(cap, HEAP_CAPTURE, env.spills()::newFile);
        this.errCap = request.stderrSink().isPresent() ? null : new OutputCapture(cap, HEAP_CAPTURE, env.spills()::newFile);
        this.records = new LaunchRecordStream(process.stdout(), nonce);
        if (files == null) {
            this.transportErr = null;
            this.outPump = new OutputPump(records, outTarget());
            this.errPump = new OutputPump(LaunchRecordStream.onStderr(process.stderr(), nonce), errTarget());
        } else {
            // The live logs are progress only: the output is downloaded from the files.
            this.transportErr = new OutputCapture(TRANSPORT_ERR, TRANSPORT_ERR, () -> {
                throw new IllegalStateException("the transport's stderr capture never spills");
            });
            this.outPump = new OutputPump(records, OutputStream.nullOutputStream());
            this.errPump = new OutputPump(process.stderr(), transportErr);
        }
    }

    private OutputStream outTarget() {
        return outCap != null ? outCap : request.stdoutSink().get();
    }

    private OutputStream errTarget() {
        return errCap != null ? errCap : request.stderrSink().get();
    }

    void start() {
        env.workers().runAsync(outPump);
        env.workers().runAsync(errPump);
    }

    /** Streams the caller's stdin: through the pipe, or by the backend's writer for streamed PAYLOAD. */
    void writeStdin(Runnable onSourceFailure) {
        Payload payload = request.stdin().orElseThrow();
        Optional<StdinWriter> writer = env.streamedStdin();
        stdin = writer.isPresent() ? StdinPump.streamed(writer.get(), process, payload, onSourceFailure)
                : StdinPump.pipe(process.stdin(), payload, onSourceFailure);
        env.workers().runAsync(stdin);
    }

    /**
     * After the command ended: waits for both outputs, up to the output grace. One rule on every
     * backend: what the command left running (a background job holding a pipe, one the backend sees
     * in the command's session, or any at all where the output cannot tell) ends with it, its tree
     * killed before the result (where it is gone already, that costs one group read). Then the
     * transport is released (a process out of the kill's reach may still hold it), downloads the output files
     * (FILES), closes the captures and flushes the caller's sinks. Returns whether the launcher
     * record came.
     */
    boolean finish(TreeKill kill) throws InterruptedException {
        Duration grace = env.config().outputGrace();
        boolean drained = outPump.finish(grace) & errPump.finish(grace);
        kill.recorded(records.record());
        // (Where the output cannot tell, a command whose record never came never ran: nothing to ask.)
        if (!drained || (env.backend().outputEndsAtExit() && records.seen()) || process.hasSurvivors(recordedGroup(kill))) {
            kill.request();
            kill.await();
            // End-of-output follows the kill; a process out of its reach (a second session) keeps
            // the pipe, and the release below lets go of it.
            outPump.finish(AFTER_KILL);
            errPump.finish(AFTER_KILL);
        }
        if (stdin != null) {
            stdin.awaitEnd();
        }
        if (files != null) {
            download();
        }
        CoreEnvironment.closeQuietly(outCap);
        CoreEnvironment.closeQuietly(errCap);
        // transportErr needs no close: it keeps at most its heap part and never opens a spill file.
        flushQuietly(request.stdoutSink());
        flushQuietly(request.stderrSink());
        process.release();
        return records.seen();
    }

    /** The group the launcher record named (the backend's own where it knows it), empty without a record. */
    private OptionalLong recordedGroup(TreeKill kill) {
        Reaper.Identity id = records.seen() ? kill.known() : null;
        return id == null ? OptionalLong.empty() : OptionalLong.of(id.pgid());
    }

    private void download() {
        RemoteFiles native_ = env.backend().files().orElseThrow();
        try {
            OutputFiles.download(native_, files.out, outTarget(), outCap);
            OutputFiles.download(native_, files.err, errTarget(), errCap);
        } catch (IOException | RuntimeException e) {
            downloadFailure = e instanceof IOException io ? io : new IOException(e.getMessage(), e);
        }
    }

    /** The launcher record, waiting for it up to {@code max} (it comes before the command runs). */
    LaunchRecordStream.Record awaitRecord(java.time.Duration max) throws InterruptedException {
        return records.awaitRecord(max);
    }

    /** Failures of the caller's payload or sinks, or of the capture itself, become the exec's error. */
    void throwFailures(boolean stopped) {
        if (stdin != null && stdin.failure() != null) {
            throw new BackendException("reading the stdin payload failed, so the command was killed: "
                    + stdin.failure().getMessage(), stdin.failure());
        }
        if (downloadFailure != null && !stopped) {
            throw new BackendException("the command ended but its output could not be downloaded from "
                    + env.name() + ": " + downloadFailure.getMessage(), downloadFailure);
        }
        // The caller gives both sinks or neither (ExecRequest.Builder.output), so stdout's says for both.
        String where = outCap == null ? " to the caller's stream" : " to its capture";
        for (OutputPump d : new OutputPump[] {outPump, errPump}) {
            if (d.failure() != null && !stopped) {
                throw new BackendException("writing the command's " + (d == outPump ? "stdout" : "stderr") + where
                        + " failed: " + d.failure().getMessage(), d.failure());
            }
        }
    }

    /** What a stopped exec's caller gets when its flow is stuck past the stop bound. */
    record SoFar(CapturedOutput stdout, CapturedOutput stderr) {
    }

    /**
     * The output captured so far, for the watchdog's answer while the flow is still stuck (a slow
     * kill): the pumps stop writing into the captures, which are closed and handed out as they
     * stand; output is the user's and is never dropped. FILES output is on the target until the
     * download after the end, so there is none to give yet; a caller's own sinks already have theirs.
     */
    SoFar soFar() {
        if (files != null) {
            return new SoFar(CapturedOutput.empty(), CapturedOutput.empty());
        }
        return new SoFar(handOut(outPump, outCap), handOut(errPump, errCap));
    }

    private CapturedOutput handOut(OutputPump pump, OutputCapture c) {
        if (c == null) {
            return CapturedOutput.empty();
        }
        pump.detach();
        CoreEnvironment.closeQuietly(c);
        return deliver(c);
    }

    CapturedOutput stdout() {
        return deliver(outCap);
    }

    CapturedOutput stderr() {
        return deliver(errCap);
    }

    private CapturedOutput deliver(OutputCapture c) {
        if (c == null) {
            return CapturedOutput.empty();
        }
        if (c.spillPath() != null) {
            env.spills().delivered(c.spillPath());
        }
        return c.result();
    }

    /**
     * The last line of stderr (FILES: of the transport's), for a staging error's message: the shell
     * says why last, after whatever a login shell's startup files printed.
     */
    String stderrLine() {
        OutputCapture c = transportErr != null ? transportErr : errCap;
        if (c == null) {
            return "";
        }
        byte[] b;
        try (InputStream in = c.result().open()) {
            b = in.readNBytes(TRANSPORT_ERR);
        } catch (IOException | RuntimeException e) {
            return "";
        }
        return RawResult.lastLine(b);
    }

    private static void flushQuietly(Optional<OutputStream> sink) {
        sink.ifPresent(s -> {
            try {
                s.flush();
            } catch (IOException | RuntimeException ignored) {
                // the caller's sink; its own errors surface on its next write
            }
        });
    }
}
