package dev.airlock.modal;

import com.google.protobuf.ByteString;
import dev.airlock.internal.BlockingPipe;
import dev.airlock.remote.CallKind;
import dev.airlock.remote.Resource;
import dev.airlock.modal.proto.router.TaskExecStdinWriteRequest;
import dev.airlock.modal.proto.router.TaskExecStdioReadRequest;
import dev.airlock.modal.proto.router.TaskExecStdioReadResponse;
import dev.airlock.modal.proto.router.TaskExecWaitRequest;
import dev.airlock.modal.proto.router.TaskExecWaitResponse;
import dev.airlock.spi.RemoteProcess;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * One exec on the router. Stdin goes in 1 MiB {@code TaskExecStdinWrite} chunks addressed by
 * offset, the last with {@code eof} (a chunk whose answer was lost is sent again at the same
 * offset: the router acknowledges what it already has). Stdout and stderr are read by offset on
 * their own threads and resumed at the received offset after a cut. The wrapper's first stdout
 * line (pid and process group, for the core's process-group kill) is stripped.
 */
final class ModalProcess implements RemoteProcess {
    private static final Logger LOG = LoggerFactory.getLogger(ModalProcess.class);
    static final int CHUNK = 1024 * 1024;
    private static final int PIPE = 256 * 1024;
    private static final int MAX_RESUMES = 50;
    static final String HEADER = "\u0001airlock-exec ";

    private final ModalClient client;
    private final String taskId;
    private final String execId;
    private final Resource resource;
    private final BlockingPipe out = new BlockingPipe(PIPE);
    private final BlockingPipe err = new BlockingPipe(PIPE);
    private final InputStream outSource = out.source(() -> { });
    private final InputStream errSource = err.source(() -> { });
    final CompletableFuture<Long> header = new CompletableFuture<>();
    private final StdinStream stdin = new StdinStream();

    ModalProcess(ModalClient client, String taskId, String execId, String sandboxId) {
        this.client = client;
        this.taskId = taskId;
        this.execId = execId;
        this.resource = Resource.sandbox(sandboxId);
    }

    void startReaders() {
        Thread o = new Thread(() -> read(0, out, true), "airlock-modal-out-" + execId);
        Thread e = new Thread(() -> read(1, err, false), "airlock-modal-err-" + execId);
        o.setDaemon(true);
        e.setDaemon(true);
        o.start();
        e.start();
    }

    /** Reads one output by offset to its end, resuming at the received offset after a cut. */
    private void read(int fd, BlockingPipe pipe, boolean stripHeader) {
        long[] offset = {0};
        byte[] headerBuf = stripHeader ? new byte[256] : null;
        int[] headerLen = {0};
        boolean[] headerDone = {!stripHeader};
        int resumes = 0;
        try {
            while (true) {
                long before = offset[0];
                try {
                    client.routed(0, r -> {
                        Iterator<TaskExecStdioReadResponse> it = r.taskExecStdioRead(TaskExecStdioReadRequest.newBuilder()
                                .setTaskId(taskId).setExecId(execId).setOffset(offset[0]).setFileDescriptor(fd).build());
                        while (it.hasNext()) {
                            byte[] d = it.next().getData().toByteArray();
                            offset[0] += d.length;
                            int from = 0;
                            if (!headerDone[0]) {
                                from = header(d, headerBuf, headerLen, headerDone);
                            }
                            if (from < d.length) {
                                try {
                                    pipe.sink.write(d, from, d.length - from);
                                } catch (IOException closed) {
                                    throw Status.CANCELLED.withDescription("reader closed").asRuntimeException();
                                }
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
            if (!headerDone[0]) {
                header.complete(-1L);
            }
            pipe.end();
        } catch (RuntimeException e) {
            header.complete(-1L);
            pipe.fail(new IOException("the " + (fd == 0 ? "stdout" : "stderr") + " of the command on Modal could not be read to its end: "
                    + e.getMessage()));
        }
    }

    /** Collects the wrapper's first line; returns where the command's own output starts in {@code d}. */
    private int header(byte[] d, byte[] buf, int[] len, boolean[] done) {
        for (int i = 0; i < d.length; i++) {
            if (d[i] == '\n' || len[0] == buf.length) {
                done[0] = true;
                String line = new String(buf, 0, len[0], StandardCharsets.UTF_8);
                long pgid = -1;
                if (line.startsWith(HEADER)) {
                    String[] ids = line.substring(HEADER.length()).trim().split(" ");
                    try {
                        if (ids.length == 2 && ids[0].equals(ids[1])) {
                            pgid = Long.parseLong(ids[1]);
                        }
                    } catch (NumberFormatException ignored) {
                        // no group: the core cannot kill this exec by group
                    }
                }
                header.complete(pgid);
                return i + 1;
            }
            buf[len[0]++] = d[i];
        }
        return d.length;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public OutputStream stdin() {
        return stdin;
    }

    @Override
    public InputStream stdout() {
        return outSource;
    }

    @Override
    public InputStream stderr() {
        return errSource;
    }

    @Override
    public int waitFor() throws InterruptedException {
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
                    return 128 + r.getSignal();
                }
                if (r.hasCode()) {
                    return r.getCode();
                }
                return NO_STATUS; // the service must always say code or signal
            } catch (RuntimeException e) {
                LOG.warn("the exit status of exec {} could not be read: {}", execId, e.getMessage());
                return NO_STATUS;
            }
        }
    }

    @Override
    public OptionalLong processGroup() {
        Long g = header.getNow(-1L);
        return g != null && g > 1 ? OptionalLong.of(g) : OptionalLong.empty();
    }

    /** Stdin as 1 MiB offset-addressed chunks; close sends what is left with {@code eof}. */
    private final class StdinStream extends OutputStream {
        private final byte[] buf = new byte[CHUNK];
        private int len;
        private long offset;
        private boolean closed;
        private boolean broken;

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] b, int off, int n) throws IOException {
            if (closed) {
                throw new IOException("stdin is closed");
            }
            while (n > 0) {
                int k = Math.min(n, buf.length - len);
                System.arraycopy(b, off, buf, len, k);
                len += k;
                off += k;
                n -= k;
                if (len == buf.length) {
                    send(false);
                }
            }
        }

        @Override
        public synchronized void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            if (!broken) {
                send(true);
            }
        }

        private void send(boolean eof) throws IOException {
            TaskExecStdinWriteRequest req = TaskExecStdinWriteRequest.newBuilder().setTaskId(taskId).setExecId(execId)
                    .setOffset(offset).setData(ByteString.copyFrom(buf, 0, len)).setEof(eof).build();
            try {
                client.calls.call(CallKind.UPLOAD_PART, "TaskExecStdinWrite", resource, () -> {
                    try {
                        return client.routed(client.settings.apiTimeout().toMillis(), s -> s.taskExecStdinWrite(req));
                    } catch (StatusRuntimeException e) {
                        Status.Code c = e.getStatus().getCode();
                        if (c == Status.Code.FAILED_PRECONDITION || c == Status.Code.ABORTED) {
                            throw new StdinRefused(e.getStatus().getDescription());
                        }
                        throw ModalClient.wire(e);
                    }
                });
            } catch (StdinRefused e) {
                broken = true;
                throw new IOException("Broken pipe: the command on Modal no longer reads its stdin (" + e.getMessage() + ")");
            }
            offset += len;
            len = 0;
        }
    }

    /** The router refused stdin because the command exited or closed it: a broken pipe, not a transport failure. */
    private static final class StdinRefused extends RuntimeException {
        StdinRefused(String message) {
            super(message, null, false, false);
        }
    }
}
