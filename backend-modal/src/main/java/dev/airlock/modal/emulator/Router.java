package dev.airlock.modal.emulator;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import dev.airlock.emulator.EmulatedSandbox;
import dev.airlock.emulator.Fault;
import dev.airlock.emulator.SandboxProcess;
import dev.airlock.modal.proto.PTYInfo;
import dev.airlock.modal.proto.router.*;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code modal.task_command_router.TaskCommandRouter}: execs, their stdin by offset, their output, their exit. */
final class Router extends TaskCommandRouterGrpc.TaskCommandRouterImplBase {
    static final String FS_TOOLS = "/__modal/.bin/modal-sandbox-fs-tools";
    private static final Pattern FS_OP = Pattern.compile("\\{\\s*\"(\\w+)\"\\s*:\\s*\\{.*\"path\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"",
            Pattern.DOTALL);
    private static final int READ_CHUNK = 1024 * 1024;
    private final ModalState state;

    Router(ModalState state) {
        this.state = state;
    }

    private ModalState.Box box(String taskId) {
        String allowed = CallGuard.ROUTER_TASK.get();
        if (allowed != null && !allowed.equals(taskId)) {
            throw Status.PERMISSION_DENIED.withDescription("this router JWT is for another task").asRuntimeException();
        }
        ModalState.Box b = state.task(taskId);
        if (b.result.isDone()) {
            throw Status.FAILED_PRECONDITION.withDescription("sandbox " + b.id + " has finished").asRuntimeException();
        }
        return b;
    }

    private ExecState exec(String taskId, String execId) {
        ModalState.Box b = state.task(taskId);
        String allowed = CallGuard.ROUTER_TASK.get();
        if (allowed != null && !allowed.equals(taskId)) {
            throw Status.PERMISSION_DENIED.withDescription("this router JWT is for another task").asRuntimeException();
        }
        ExecState e = b.execs.get(execId);
        if (e == null) {
            throw Status.NOT_FOUND.withDescription("no exec " + execId + " on task " + taskId).asRuntimeException();
        }
        return e;
    }

    /**
     * A filesystem snapshot, as the current SDKs take it: a copy of the running sandbox's root as a
     * new image, once per {@code snapshot_id}; {@code ttl_seconds} must be set, -1 or positive.
     */
    @Override
    public void taskSnapshotFilesystem(TaskSnapshotFilesystemRequest r, StreamObserver<TaskSnapshotFilesystemResponse> out) {
        ModalState.Box b = box(r.getTaskId());
        if (!r.hasTtlSeconds() || (r.getTtlSeconds() <= 0 && r.getTtlSeconds() != -1)) {
            throw Status.INVALID_ARGUMENT.withDescription("ttl_seconds must be set: a positive number of seconds, or -1"
                    + " for no expiry").asRuntimeException();
        }
        String id = state.snapshots.take(b.sandbox.root(), r.getSnapshotId());
        out.onNext(TaskSnapshotFilesystemResponse.newBuilder().setImageId(id).build());
        out.onCompleted();
    }

    @Override
    public void taskExecStart(TaskExecStartRequest r, StreamObserver<TaskExecStartResponse> out) {
        ModalState.Box b = box(r.getTaskId());
        if (r.getExecId().isBlank()) {
            throw Status.INVALID_ARGUMENT.withDescription("exec_id is empty").asRuntimeException();
        }
        long argvBytes = r.getCommandArgsList().stream().mapToLong(a -> a.getBytes(StandardCharsets.UTF_8).length).sum();
        if (argvBytes > ModalEmulator.MAX_ARGV_BYTES) {
            throw Status.INVALID_ARGUMENT.withDescription("command_args total " + argvBytes + " bytes; the limit is "
                    + ModalEmulator.MAX_ARGV_BYTES + " (send large input on stdin)").asRuntimeException();
        }
        if (r.getCommandArgsCount() == 0) {
            throw Status.INVALID_ARGUMENT.withDescription("command_args is empty").asRuntimeException();
        }
        Optional<Fault> fault = Optional.ofNullable(CallGuard.FAULT.get()).flatMap(f -> f);
        synchronized (b) {
            if (b.execs.containsKey(r.getExecId())) {
                // exec_id is the idempotency key: a repeated start is acknowledged, never run twice.
                state.context.journal().call("TaskExecStart", b.id, r.getSerializedSize(), 0, fault);
                out.onNext(TaskExecStartResponse.getDefaultInstance());
                out.onCompleted();
                return;
            }
            if (r.getCommandArgs(0).equals(FS_TOOLS)) {
                b.execs.put(r.getExecId(), fsTools(b, r, fault));
            } else {
                b.execs.put(r.getExecId(), process(b, r, fault));
            }
        }
        out.onNext(TaskExecStartResponse.getDefaultInstance());
        out.onCompleted();
    }

    private ExecState process(ModalState.Box b, TaskExecStartRequest r, Optional<Fault> fault) {
        Map<String, String> env = new HashMap<>(b.env);
        env.putAll(r.getEnvMap());
        String cwd = r.hasWorkdir() && !r.getWorkdir().isBlank() ? r.getWorkdir() : b.workdir;
        List<String> argv = r.getCommandArgsList();
        Optional<PTYInfo> pty = r.hasPtyInfo() ? Optional.of(r.getPtyInfo()) : Optional.empty();
        if (PtyExec.wanted(pty)) {
            argv = PtyExec.argv(argv, pty.get(), env);
            env = PtyExec.env(env, pty.get());
        }
        SandboxProcess p;
        try {
            p = b.sandbox.exec(new EmulatedSandbox.Command("TaskExecStart", argv, cwd, env,
                    r.getExecId(), r.getSerializedSize(), fault));
        } catch (IOException | RuntimeException e) {
            throw Status.INVALID_ARGUMENT.withDescription("cannot start " + r.getCommandArgs(0) + ": " + e.getMessage())
                    .asRuntimeException();
        }
        ExecState e = new ExecState(r.getExecId(), logs(b), p.stdin());
        ExecState.pump(p.stdout(), r.getStdoutConfig() == 1 ? e.stdout : sink(), "exec-out-" + r.getExecId());
        ExecState.pump(p.stderr(), r.getStderrConfig() == 1 ? e.stderr : sink(), "exec-err-" + r.getExecId());
        if (r.getStdoutConfig() != 1) {
            e.stdout.close();
        }
        if (r.getStderrConfig() != 1) {
            e.stderr.close();
        }
        Thread waiter = new Thread(() -> {
            try {
                boolean done = r.hasTimeoutSecs() && r.getTimeoutSecs() > 0
                        ? p.waitFor(r.getTimeoutSecs(), TimeUnit.SECONDS) : p.waitFor(Long.MAX_VALUE, TimeUnit.DAYS);
                if (!done) {
                    p.signal(9);
                }
                e.exit.complete(p.exit());
            } catch (InterruptedException ie) {
                e.exit.complete(SandboxProcess.Exit.signal(9));
            }
        }, "exec-wait-" + r.getExecId());
        waiter.setDaemon(true);
        waiter.start();
        return e;
    }

    private OutputLog sink() {
        return new OutputLog(state.context.stateDir().resolve("logs")); // DEVNULL: read and dropped
    }

    private java.nio.file.Path logs(ModalState.Box b) {
        return state.context.stateDir().resolve("logs").resolve(b.id);
    }

    /** {@code modal-sandbox-fs-tools}: files written and read by the emulator itself, as the image's binary would. */
    private ExecState fsTools(ModalState.Box b, TaskExecStartRequest r, Optional<Fault> fault) {
        state.context.journal().dispatch("TaskExecStart", b.id, String.join(" ", r.getCommandArgsList()),
                r.getCommandArgsList(), List.copyOf(r.getEnvMap().keySet()), r.getSerializedSize(), r.getExecId(), fault);
        Matcher m = FS_OP.matcher(r.getCommandArgsCount() > 1 ? r.getCommandArgs(1) : "");
        if (!m.find()) {
            return failed(logs(b), r.getExecId(), "InvalidArgument", "expected a JSON operation like {\"ReadFile\":{\"path\":P}}");
        }
        String op = m.group(1);
        String path = unescape(m.group(2));
        switch (op) {
            case "ReadFile" -> {
                InputStream in;
                try {
                    in = b.sandbox.read(path);
                } catch (IOException | RuntimeException ex) {
                    return failed(logs(b), r.getExecId(), kind(ex), String.valueOf(ex.getMessage()));
                }
                // The file's bytes go to stdout as they are read, a chunk at a time; the exit comes after the last.
                ExecState e = new ExecState(r.getExecId(), logs(b), OutputStream.nullOutputStream(), () -> { });
                e.write(0, ByteString.EMPTY, true);
                Thread t = new Thread(() -> {
                    int code = 0;
                    byte[] buf = new byte[READ_CHUNK];
                    try (in) {
                        for (int n; (n = in.read(buf)) > 0; ) {
                            e.stdout.append(buf, 0, n);
                        }
                    } catch (IOException | RuntimeException ex) {
                        byte[] err = error(kind(ex), String.valueOf(ex.getMessage()));
                        e.stderr.append(err, 0, err.length);
                        code = 1;
                    }
                    e.stdout.close();
                    e.stderr.close();
                    e.exit.complete(SandboxProcess.Exit.code(code));
                }, "fs-read-" + r.getExecId());
                t.setDaemon(true);
                t.start();
                return e;
            }
            case "WriteFile" -> {
                FileSink sink = new FileSink(b.sandbox, path);
                ExecState[] self = new ExecState[1];
                self[0] = new ExecState(r.getExecId(), logs(b), sink, () -> {
                    ExecState e = self[0];
                    Optional<Exception> failure = sink.commit();
                    if (failure.isPresent()) {
                        byte[] err = error(kind(failure.get()), String.valueOf(failure.get().getMessage()));
                        e.stderr.append(err, 0, err.length);
                    }
                    e.stdout.close();
                    e.stderr.close();
                    e.exit.complete(SandboxProcess.Exit.code(failure.isPresent() ? 1 : 0));
                });
                return self[0];
            }
            default -> {
                return failed(logs(b), r.getExecId(), "NotSupported", op + " is not emulated (ReadFile and WriteFile are)");
            }
        }
    }

    /**
     * fs-tools' WriteFile target: stdin goes straight into the sandbox's upload of the file
     * ({@link EmulatedSandbox#upload}), which is put in place at EOF and never before (a client
     * that stops sending leaves the file as it was). A failure (the path cannot be written, the
     * disk is full) is kept, the rest of stdin dropped, and reported at EOF as fs-tools would.
     */
    private static final class FileSink extends OutputStream {
        private EmulatedSandbox.Upload upload;
        private Exception failure;

        FileSink(EmulatedSandbox sandbox, String path) {
            try {
                upload = sandbox.upload(path, 0644);
            } catch (IOException | RuntimeException e) {
                failure = e;
            }
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            if (failure != null) {
                return;
            }
            try {
                upload.stream().write(b, off, len);
            } catch (IOException e) {
                fail(e);
            }
        }

        /** Puts the file in place; the failure, if there was one. */
        Optional<Exception> commit() {
            if (failure == null) {
                try {
                    upload.commit();
                } catch (IOException | RuntimeException e) {
                    fail(e);
                }
            }
            return Optional.ofNullable(failure);
        }

        private void fail(Exception e) {
            failure = e;
            try {
                upload.close();
            } catch (IOException ignored) {
                // the temp file goes with the sandbox
            }
        }
    }

    private static String kind(Exception e) {
        if (e instanceof NoSuchFileException || e instanceof dev.airlock.NoSuchPathException) {
            return "NotFound";
        }
        if (e instanceof AccessDeniedException) {
            return "PermissionDenied";
        }
        return "Other";
    }

    private static byte[] error(String kind, String message) {
        return ("{\"error_kind\":\"" + kind + "\",\"message\":" + dev.airlock.emulator.Jsons.quote(message)
                + ",\"detail\":\"\"}").getBytes(StandardCharsets.UTF_8);
    }

    private static ExecState failed(java.nio.file.Path logs, String execId, String kind, String message) {
        ExecState e = new ExecState(execId, logs, OutputStream.nullOutputStream(), () -> { });
        byte[] err = error(kind, message);
        e.stderr.append(err, 0, err.length);
        e.stdout.close();
        e.stderr.close();
        e.exit.complete(SandboxProcess.Exit.code(1));
        return e;
    }

    private static String unescape(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                switch (n) {
                    case 'n' -> sb.append('\n');
                    case 't' -> sb.append('\t');
                    case 'r' -> sb.append('\r');
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'u' -> {
                        sb.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                        i += 4;
                    }
                    default -> sb.append(n);
                }
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    @Override
    public void taskExecStdinWrite(TaskExecStdinWriteRequest r, StreamObserver<TaskExecStdinWriteResponse> out) {
        if (r.getData().size() > ModalEmulator.MAX_STDIN_CHUNK) {
            throw Status.RESOURCE_EXHAUSTED.withDescription("stdin chunk of " + r.getData().size() + " bytes; the limit is "
                    + ModalEmulator.MAX_STDIN_CHUNK).asRuntimeException();
        }
        exec(r.getTaskId(), r.getExecId()).write(r.getOffset(), r.getData(), r.getEof());
        out.onNext(TaskExecStdinWriteResponse.getDefaultInstance());
        out.onCompleted();
    }

    @Override
    public StreamObserver<TaskExecStdinWriteStreamRequest> taskExecStdinWriteStream(StreamObserver<TaskExecStdinWriteStreamResponse> out) {
        return new StreamObserver<>() {
            private ExecState exec;
            private long offset;
            private boolean failed;

            @Override
            public void onNext(TaskExecStdinWriteStreamRequest m) {
                if (failed) {
                    return;
                }
                try {
                    switch (m.getMessageCase()) {
                        case START -> {
                            exec = exec(m.getStart().getTaskId(), m.getStart().getExecId());
                            offset = m.getStart().getOffset();
                        }
                        case DATA -> {
                            if (exec == null) {
                                throw Status.INVALID_ARGUMENT.withDescription("the first message must be start").asRuntimeException();
                            }
                            ByteString d = m.getData();
                            if (d.size() > ModalEmulator.MAX_STDIN_CHUNK) {
                                throw Status.RESOURCE_EXHAUSTED.withDescription("stdin chunk too large").asRuntimeException();
                            }
                            exec.write(offset, d, false);
                            offset += d.size();
                        }
                        case END -> {
                            if (exec == null) {
                                throw Status.INVALID_ARGUMENT.withDescription("the first message must be start").asRuntimeException();
                            }
                            exec.write(offset, ByteString.EMPTY, true);
                        }
                        default -> throw Status.INVALID_ARGUMENT.withDescription("empty stdin stream message").asRuntimeException();
                    }
                } catch (io.grpc.StatusRuntimeException e) {
                    failed = true;
                    out.onError(e);
                }
            }

            @Override
            public void onError(Throwable t) {
                // the client went away: what was written stays written; TaskExecStdinStatus tells how much
            }

            @Override
            public void onCompleted() {
                if (!failed) {
                    out.onNext(TaskExecStdinWriteStreamResponse.getDefaultInstance());
                    out.onCompleted();
                }
            }
        };
    }

    @Override
    public void taskExecStdinStatus(TaskExecStdinStatusRequest r, StreamObserver<TaskExecStdinStatusResponse> out) {
        ExecState e = exec(r.getTaskId(), r.getExecId());
        out.onNext(TaskExecStdinStatusResponse.newBuilder().setNumBytesWritten(e.written()).setClosed(e.closed()).build());
        out.onCompleted();
    }

    /**
     * Streams the output from the asked offset, a chunk at a time and only as fast as the client
     * takes it: the next chunk is read from the log when the call is ready for more, so a slow
     * reader holds back the emulator instead of queueing the whole output in its memory.
     */
    @Override
    public void taskExecStdioRead(TaskExecStdioReadRequest r, StreamObserver<TaskExecStdioReadResponse> out) {
        ExecState e = exec(r.getTaskId(), r.getExecId());
        OutputLog log = r.getFileDescriptor() == 1 ? e.stderr : e.stdout;
        ServerCallStreamObserver<TaskExecStdioReadResponse> call = (ServerCallStreamObserver<TaskExecStdioReadResponse>) out;
        long offset = r.getOffset();
        try {
            while (!call.isCancelled()) {
                // isReady() turns true once the transport has passed on what was sent; its onReady
                // callback would run only after this handler returns (gRPC serializes a call's
                // callbacks), so the wait polls.
                while (!call.isReady() && !call.isCancelled()) {
                    Thread.sleep(1);
                }
                if (call.isCancelled()) {
                    return;
                }
                byte[] chunk = log.read(offset, READ_CHUNK);
                if (chunk.length == 0) {
                    break;
                }
                offset += chunk.length;
                // The chunk is this call's alone: wrapped, not copied again.
                out.onNext(TaskExecStdioReadResponse.newBuilder().setData(UnsafeByteOperations.unsafeWrap(chunk)).build());
            }
            out.onCompleted();
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            out.onError(Status.CANCELLED.asRuntimeException());
        }
    }

    @Override
    public void taskExecWait(TaskExecWaitRequest r, StreamObserver<TaskExecWaitResponse> out) {
        ExecState e = exec(r.getTaskId(), r.getExecId());
        SandboxProcess.Exit x = e.exit.join();
        TaskExecWaitResponse.Builder b = TaskExecWaitResponse.newBuilder();
        out.onNext((x.signalled() ? b.setSignal(x.value()) : b.setCode(x.value())).build());
        out.onCompleted();
    }

    @Override
    public void taskExecPoll(TaskExecPollRequest r, StreamObserver<TaskExecPollResponse> out) {
        ExecState e = exec(r.getTaskId(), r.getExecId());
        TaskExecPollResponse.Builder b = TaskExecPollResponse.newBuilder();
        if (e.exit.isDone()) {
            SandboxProcess.Exit x = e.exit.join();
            if (x.signalled()) {
                b.setSignal(x.value());
            } else {
                b.setCode(x.value());
            }
        }
        out.onNext(b.build());
        out.onCompleted();
    }

}
