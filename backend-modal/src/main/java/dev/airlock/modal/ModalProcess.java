package dev.airlock.modal;

import com.google.protobuf.ByteString;
import dev.airlock.spi.BlockingPipe;
import dev.airlock.spi.OutputPipes;
import dev.airlock.remote.CallKind;
import dev.airlock.remote.Resource;
import dev.airlock.modal.proto.router.TaskExecStdinWriteRequest;
import dev.airlock.modal.proto.router.TaskExecStdioReadRequest;
import dev.airlock.modal.proto.router.TaskExecStdioReadResponse;
import dev.airlock.modal.proto.router.TaskExecWaitRequest;
import dev.airlock.modal.proto.router.TaskExecWaitResponse;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.ProcessEnd;
import dev.airlock.spi.RemoteProcess;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Iterator;
import java.util.OptionalLong;

/**
 * One exec on the router. Stdin is written by the core's streamed-PAYLOAD hook through
 * {@link #writeStdin} ({@code TaskExecStdinWrite} chunks addressed by offset, then an explicit
 * {@code eof}; a chunk whose answer was lost is sent again at the same offset: the router
 * acknowledges what it already has). Stdout and stderr are read by offset on their own threads and
 * resumed at the received offset after a cut; they pass through unaltered (the core's launcher
 * record on stdout names the process group its kill signals).
 */
final class ModalProcess implements RemoteProcess {
    private static final Logger LOG = LoggerFactory.getLogger(ModalProcess.class);
    private static final int PIPE = 256 * 1024;
    private static final int MAX_RESUMES = 50;
    /**
     * After the exit, how long waitFor waits for an idle reader (no byte, no resume): a background
     * job holding the output keeps its reader waiting, and the core's output grace deals with that.
     * Above the longest pause between two resumes (1 s).
     */
    private static final long READERS_QUIET_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);

    private final ModalClient client;
    private final String taskId;
    private final String execId;
    private final Resource resource;
    private final OutputPipes output = new OutputPipes(PIPE);
    private final java.util.concurrent.CountDownLatch readersDone = new java.util.concurrent.CountDownLatch(2);
    private final java.util.concurrent.atomic.AtomicInteger writing = new java.util.concurrent.atomic.AtomicInteger();
    private volatile long lastActivity = System.nanoTime();
    /** An output could not be read to its end (resumes spent, or a failure that is not retried). */
    private volatile boolean cutShort;
    /** Asks the service whether the sandbox has ended: its one line then, else empty. */
    private final java.util.function.Supplier<java.util.Optional<dev.airlock.AirlockException>> sandboxEnded;
    /** Set when the sandbox ended under this exec: what {@link #lostReason} answers. */
    private volatile dev.airlock.AirlockException ended;

    ModalProcess(ModalClient client, String taskId, String execId, String sandboxId,
            java.util.function.Supplier<java.util.Optional<dev.airlock.AirlockException>> sandboxEnded) {
        this.client = client;
        this.taskId = taskId;
        this.execId = execId;
        this.resource = Resource.sandbox(sandboxId);
        this.sandboxEnded = sandboxEnded;
    }

    void startReaders() {
        Thread o = new Thread(() -> read(0, output.out), "airlock-modal-out-" + execId);
        Thread e = new Thread(() -> read(1, output.err), "airlock-modal-err-" + execId);
        o.setDaemon(true);
        e.setDaemon(true);
        o.start();
        e.start();
    }

    /** Reads one output by offset to its end, resuming at the received offset after a cut. */
    private void read(int fd, BlockingPipe pipe) {
        long[] offset = {0};
        int resumes = 0;
        try {
            while (true) {
                long before = offset[0];
                lastActivity = System.nanoTime();
                try {
                    client.routed(0, r -> {
                        Iterator<TaskExecStdioReadResponse> it = r.taskExecStdioRead(TaskExecStdioReadRequest.newBuilder()
                                .setTaskId(taskId).setExecId(execId).setOffset(offset[0]).setFileDescriptor(fd).build());
                        while (it.hasNext()) {
                            byte[] d = it.next().getData().toByteArray();
                            offset[0] += d.length;
                            writing.incrementAndGet(); // a slow reader of the pipe is not an idle command
                            try {
                                if (!pipe.offer(d, 0, d.length)) {
                                    throw Status.CANCELLED.withDescription("reader closed").asRuntimeException();
                                }
                            } catch (InterruptedIOException interrupted) {
                                throw Status.CANCELLED.withDescription("interrupted").withCause(interrupted).asRuntimeException();
                            } finally {
                                writing.decrementAndGet();
                                lastActivity = System.nanoTime();
                            }
                        }
                        return null;
                    });
                    break;
                } catch (StatusRuntimeException e) {
                    if (pipe.isReaderClosed()) {
                        break;
                    }
                    boolean progress = offset[0] > before;
                    if (!client.calls.policy().retryable(CallKind.READ, ModalClient.wire(e)) || (!progress && ++resumes > MAX_RESUMES)) {
                        throw e;
                    }
                    if (progress) {
                        resumes = 0;
                    }
                    LOG.debug("output of exec {} cut at {} ({}); resuming", execId, offset[0], e.getStatus().getCode());
                    sleep(Math.min(1000, 50L * (resumes + 1)));
                }
            }
            pipe.end();
        } catch (RuntimeException e) {
            cutShort = true;
            pipe.fail(new IOException("the " + (fd == 0 ? "stdout" : "stderr") + " of the command on Modal could not be read to its end: "
                    + e.getMessage()));
        } finally {
            readersDone.countDown();
        }
    }

    /**
     * The exit status, unless an output could not be read to its end: the core drains our pipes
     * as best it can and takes a failed pipe for the end of output, so short output would pass
     * with the real exit code. Waits for the readers after the exit (while they make progress),
     * then reports such an end as lost, which the core turns into a typed error.
     */
    private ProcessEnd unlessCutShort(ProcessEnd end) throws InterruptedException {
        while (!readersDone.await(20, java.util.concurrent.TimeUnit.MILLISECONDS)) {
            if (writing.get() == 0 && System.nanoTime() - lastActivity > READERS_QUIET_NANOS) {
                break; // idle: a background job holds the output; the core's grace takes it from here
            }
        }
        if (cutShort) {
            LOG.debug("the output of exec {} could not be read to its end", execId);
            return ProcessEnd.lost();
        }
        return end;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Never written: stdin goes through {@link #writeStdin} (the core's streamed-PAYLOAD hook), not a pipe. */
    @Override
    public OutputStream stdin() {
        return OutputStream.nullOutputStream();
    }

    @Override
    public InputStream stdout() {
        return output.stdout();
    }

    @Override
    public InputStream stderr() {
        return output.stderr();
    }

    @Override
    public int waitFor() throws InterruptedException {
        ProcessEnd end = awaitEnd();
        return end instanceof ProcessEnd.Lost ? NO_STATUS : end.exitCode();
    }

    /**
     * How the exec ended, from {@code TaskExecWait}: a {@code signal} N is {@link ProcessEnd#signalled}
     * (128+N as Airlock's exit code, as a shell and the SDKs report it), a {@code code} is exited
     * with it; lost when neither came or an output was cut short ({@link #unlessCutShort}).
     */
    @Override
    public ProcessEnd awaitEnd() throws InterruptedException {
        while (true) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            try {
                java.util.Optional<TaskExecWaitResponse> w = client.calls.call(CallKind.STATUS, "TaskExecWait", resource, () -> {
                    try {
                        return java.util.Optional.of(client.routed(60_000, s -> s.taskExecWait(TaskExecWaitRequest.newBuilder()
                                .setTaskId(taskId).setExecId(execId).build())));
                    } catch (StatusRuntimeException e) {
                        if (e.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED) {
                            return java.util.Optional.<TaskExecWaitResponse>empty(); // a long command: each wait lives 60 s
                        }
                        throw ModalClient.wire(e);
                    }
                });
                if (w.isEmpty()) {
                    continue;
                }
                TaskExecWaitResponse r = w.get();
                if (r.hasSignal()) {
                    return r.getSignal() == SIGKILL ? unlessSandboxEnded(ProcessEnd.signalled(SIGKILL))
                            : unlessCutShort(ProcessEnd.signalled(r.getSignal()));
                }
                if (r.hasCode()) {
                    // 137: a shell's report of a child killed by SIGKILL, as the sandbox's end does
                    return r.getCode() == 128 + SIGKILL ? unlessSandboxEnded(ProcessEnd.exited(r.getCode()))
                            : unlessCutShort(ProcessEnd.exited(r.getCode()));
                }
                return unlessSandboxEnded(ProcessEnd.lost()); // the service must always say code or signal
            } catch (RuntimeException e) {
                LOG.warn("the exit status of exec {} could not be read: {}", execId, e.getMessage());
                return unlessSandboxEnded(ProcessEnd.lost());
            }
        }
    }

    private static final int SIGKILL = 9;

    /**
     * {@code end}, unless the sandbox ended under the command: its end (killed, or no status) is
     * then the sandbox's, not the command's, and the exec fails with the sandbox's ended line
     * ({@link #lostReason}) rather than passing 137 for the command's own exit. Asked only for a
     * kill (signal 9, or the 137 the wrapping shell reports for its killed child) or a lost end,
     * so a command's ordinary exit costs no round trip.
     */
    private ProcessEnd unlessSandboxEnded(ProcessEnd end) throws InterruptedException {
        java.util.Optional<dev.airlock.AirlockException> why = sandboxEnded.get();
        if (why.isPresent()) {
            ended = why.get();
            return ProcessEnd.lost();
        }
        return end instanceof ProcessEnd.Lost ? end : unlessCutShort(end);
    }

    @Override
    public java.util.Optional<dev.airlock.AirlockException> lostReason() {
        return java.util.Optional.ofNullable(ended);
    }

    /** Empty: the core's launcher record names the group (the shell leads it, see {@link ModalBackend#WRAPPER}). */
    @Override
    public OptionalLong processGroup() {
        return OptionalLong.empty();
    }

    /**
     * Sends {@code length} bytes at {@code offset} of the command's stdin ({@code eof} ends it).
     * Retried as an idempotent upload part: a resent chunk at the acknowledged offset is
     * acknowledged again, never appended twice. A refusal because the command exited or closed
     * its stdin is a broken pipe.
     */
    void writeStdin(long offset, byte[] data, int length, boolean eof, Deadline deadline) throws IOException {
        if (deadline.passed()) {
            throw new IOException("stdin of the command on Modal not delivered at offset " + offset + ": its deadline passed");
        }
        TaskExecStdinWriteRequest req = TaskExecStdinWriteRequest.newBuilder().setTaskId(taskId).setExecId(execId)
                .setOffset(offset).setData(ByteString.copyFrom(data, 0, length)).setEof(eof).build();
        try {
            client.calls.call(CallKind.UPLOAD_PART, "TaskExecStdinWrite", resource, () -> {
                long timeout = Math.max(1, Math.min(client.settings.apiTimeout().toMillis(), deadline.remaining().toMillis()));
                try {
                    return client.routed(timeout, s -> s.taskExecStdinWrite(req));
                } catch (StatusRuntimeException e) {
                    Status.Code c = e.getStatus().getCode();
                    if (c == Status.Code.FAILED_PRECONDITION || c == Status.Code.ABORTED) {
                        throw new StdinRefused(e.getStatus().getDescription());
                    }
                    throw ModalClient.wire(e);
                }
            });
        } catch (StdinRefused e) {
            throw new dev.airlock.spi.StdinClosedException("the command on Modal no longer reads its stdin (" + e.getMessage() + ")");
        }
    }

    /** The router refused stdin because the command exited or closed it: a broken pipe, not a transport failure. */
    private static final class StdinRefused extends RuntimeException {
        StdinRefused(String message) {
            super(message, null, false, false);
        }
    }
}
