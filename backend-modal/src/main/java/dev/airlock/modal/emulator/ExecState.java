package dev.airlock.modal.emulator;

import com.google.protobuf.ByteString;
import dev.airlock.emulator.SandboxProcess;
import io.grpc.Status;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;

/**
 * One exec on the router: its stdin by offset (a resent chunk is acknowledged and not written
 * twice, a gap is refused, a write after EOF or after the exit fails), its two outputs kept
 * whole on disk ({@link OutputLog}), and its exit (a code or a signal). Stdin is passed on chunk by chunk as it
 * arrives, to a process or to the emulator's own sink (fs-tools' WriteFile), never gathered.
 */
final class ExecState {
    final String execId;
    final OutputLog stdout;
    final OutputLog stderr;
    /** How it ended: a code, or the signal that killed it (TaskExecWait's oneof). */
    final CompletableFuture<SandboxProcess.Exit> exit = new CompletableFuture<>();
    private final OutputStream stdin;
    private final Runnable onEof;
    private long written;
    private boolean closed;

    /** An exec whose stdin goes to a process. */
    ExecState(String execId, java.nio.file.Path logs, OutputStream stdin) {
        this.execId = execId;
        this.stdout = new OutputLog(logs);
        this.stderr = new OutputLog(logs);
        this.stdin = stdin;
        this.onEof = null;
    }

    /**
     * An exec handled inside the emulator (fs-tools): its stdin goes to {@code sink} as it
     * arrives, and {@code onEof} runs once it has all come (the sink is not closed here).
     */
    ExecState(String execId, java.nio.file.Path logs, OutputStream sink, Runnable onEof) {
        this.execId = execId;
        this.stdout = new OutputLog(logs);
        this.stderr = new OutputLog(logs);
        this.stdin = sink;
        this.onEof = onEof;
    }

    /** Pumps a process output into a log on its own thread, 64 KiB at a time. */
    static void pump(InputStream in, OutputLog log, String name) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (in) {
                for (int n; (n = in.read(buf)) > 0; ) {
                    log.append(buf, 0, n);
                }
            } catch (IOException | RuntimeException ignored) {
                // the process went away (or its sandbox ended): what was read is kept
            } finally {
                log.close();
            }
        }, name);
        t.setDaemon(true);
        t.start();
    }

    synchronized long written() {
        return written;
    }

    synchronized boolean closed() {
        return closed;
    }

    /**
     * Writes {@code data} at {@code offset}: the part below what was already written is skipped
     * (a resend), a start beyond it is a gap and refused.
     */
    synchronized void write(long offset, ByteString data, boolean eof) {
        long end = offset + data.size();
        if (offset > written) {
            throw Status.OUT_OF_RANGE.withDescription("stdin offset " + offset + " leaves a gap: "
                    + written + " bytes written so far").asRuntimeException();
        }
        if (closed) {
            if (end <= written) {
                return; // a resend of what was acknowledged before EOF
            }
            throw Status.FAILED_PRECONDITION.withDescription("stdin of exec " + execId + " is closed").asRuntimeException();
        }
        int skip = (int) (written - offset);
        if (data.size() > skip) {
            if (exit.isDone()) {
                throw Status.FAILED_PRECONDITION.withDescription("exec " + execId + " has exited; its stdin is closed")
                        .asRuntimeException();
            }
            try {
                data.substring(skip).writeTo(stdin); // no copy of the chunk: written from the message's own bytes
                stdin.flush();
            } catch (IOException e) {
                throw Status.FAILED_PRECONDITION.withDescription("exec " + execId + " no longer reads its stdin: "
                        + e.getMessage()).asRuntimeException();
            }
            written = end;
        }
        if (eof) {
            closed = true;
            if (onEof != null) {
                onEof.run();
                return;
            }
            try {
                stdin.close();
            } catch (IOException ignored) {
                // the process already closed its end
            }
        }
    }
}
