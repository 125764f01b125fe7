package dev.airlock.modal;

import com.google.protobuf.ByteString;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.modal.proto.AppGetOrCreateRequest;
import dev.airlock.modal.proto.ModalClientGrpc;
import dev.airlock.modal.proto.router.TaskCommandRouterGrpc;
import dev.airlock.modal.proto.router.TaskExecStartRequest;
import dev.airlock.modal.proto.router.TaskExecStdinStatusRequest;
import dev.airlock.modal.proto.router.TaskExecStdinWriteRequest;
import dev.airlock.modal.proto.router.TaskExecWaitRequest;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.spi.OpenContext;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the emulator enforces, as the service does, and the client's router re-auth. */
class ModalEmulatorTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture("TaskExecWait:status=401@nth=2", Map.of());

    private static ModalClient client() {
        var s = EMULATOR.settings();
        return new ModalClient(ModalSettings.from(s, Map.of()), RetryPolicy.from(s, ModalSettings.PREFIX));
    }

    @Test
    void controlCallsNeedTheTokenPair() {
        var u = EMULATOR.served.emulator().url();
        ManagedChannel ch = NettyChannelBuilder.forAddress(u.getHost(), u.getPort()).usePlaintext().build();
        try {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> ModalClientGrpc.newBlockingStub(ch)
                    .appGetOrCreate(AppGetOrCreateRequest.newBuilder().setAppName("x").build()));
            assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode());
            // The router, on the same port, needs a bearer JWT from the control plane.
            StatusRuntimeException router = assertThrows(StatusRuntimeException.class, () -> TaskCommandRouterGrpc.newBlockingStub(ch)
                    .taskExecWait(TaskExecWaitRequest.newBuilder().setTaskId("ta-x").setExecId("x").build()));
            assertEquals(Status.Code.UNAUTHENTICATED, router.getStatus().getCode());
        } finally {
            ch.shutdownNow();
        }
    }

    @Test
    void argvOverTheLimitIsRefusedAndStdinOffsetsMustBeContiguous() throws Exception {
        try (ModalClient c = client(); ModalSandbox sb = ModalSandbox.create(c, false)) {
            String task = c.taskId();
            StatusRuntimeException big = assertThrows(StatusRuntimeException.class, () -> c.routed(10_000, r -> r.taskExecStart(
                    TaskExecStartRequest.newBuilder().setTaskId(task).setExecId(UUID.randomUUID().toString())
                            .addAllCommandArgs(List.of("echo", "x".repeat(65_537))).build())));
            assertEquals(Status.Code.INVALID_ARGUMENT, big.getStatus().getCode());

            String exec = UUID.randomUUID().toString();
            c.routed(10_000, r -> r.taskExecStart(TaskExecStartRequest.newBuilder().setTaskId(task).setExecId(exec)
                    .addAllCommandArgs(List.of("cat")).setStdoutConfig(1).setStderrConfig(1).build()));
            var abc = ByteString.copyFrom("abc", StandardCharsets.UTF_8);
            c.routed(10_000, r -> r.taskExecStdinWrite(TaskExecStdinWriteRequest.newBuilder().setTaskId(task).setExecId(exec)
                    .setOffset(0).setData(abc).build()));
            // the same chunk again (a resend after a lost answer): acknowledged, not written twice
            c.routed(10_000, r -> r.taskExecStdinWrite(TaskExecStdinWriteRequest.newBuilder().setTaskId(task).setExecId(exec)
                    .setOffset(0).setData(abc).build()));
            StatusRuntimeException gap = assertThrows(StatusRuntimeException.class, () -> c.routed(10_000, r -> r.taskExecStdinWrite(
                    TaskExecStdinWriteRequest.newBuilder().setTaskId(task).setExecId(exec).setOffset(5).setData(abc).build())));
            assertEquals(Status.Code.OUT_OF_RANGE, gap.getStatus().getCode());
            // A chunk over the router's 16 MiB message limit is refused, and nothing of it written.
            var huge = ByteString.copyFrom(new byte[dev.airlock.modal.emulator.ModalEmulator.MAX_STDIN_CHUNK + 1]);
            StatusRuntimeException tooBig = assertThrows(StatusRuntimeException.class, () -> c.routed(30_000, r -> r.taskExecStdinWrite(
                    TaskExecStdinWriteRequest.newBuilder().setTaskId(task).setExecId(exec).setOffset(3).setData(huge).build())));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, tooBig.getStatus().getCode());
            assertEquals(3, c.routed(10_000, r -> r.taskExecStdinStatus(TaskExecStdinStatusRequest.newBuilder().setTaskId(task)
                    .setExecId(exec).build())).getNumBytesWritten());
            c.routed(10_000, r -> r.taskExecStdinWrite(TaskExecStdinWriteRequest.newBuilder().setTaskId(task).setExecId(exec)
                    .setOffset(3).setEof(true).build()));
            assertEquals(0, c.routed(10_000, r -> r.taskExecWait(TaskExecWaitRequest.newBuilder().setTaskId(task).setExecId(exec)
                    .build())).getCode());
        }
    }

    @Test
    void anUnauthenticatedRouterCallFetchesAccessAgainOnce() {
        long before = EMULATOR.served.journal().entries("SandboxGetCommandRouterAccess").size();
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings()))) {
            for (int i = 0; i < 3; i++) {
                ExecResult r = env.exec(ExecRequest.of("echo hi"));
                assertEquals("hi\n", new String(r.stdout().bytes(), StandardCharsets.UTF_8));
            }
        }
        assertTrue(EMULATOR.served.journal().entries("SandboxGetCommandRouterAccess").size() > before,
                "the client did not fetch router access again after UNAUTHENTICATED");
    }
}
