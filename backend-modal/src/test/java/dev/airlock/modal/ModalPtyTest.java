package dev.airlock.modal;

import dev.airlock.ConfigurationException;
import dev.airlock.emulator.SandboxIsolation;
import dev.airlock.modal.proto.PTYInfo;
import dev.airlock.modal.proto.router.TaskExecStartRequest;
import dev.airlock.modal.proto.router.TaskExecStdioReadRequest;
import dev.airlock.modal.proto.router.TaskExecStdioReadResponse;
import dev.airlock.modal.proto.router.TaskExecWaitRequest;
import dev.airlock.modal.proto.router.TaskExecWaitResponse;
import dev.airlock.remote.RetryPolicy;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An exec with {@code pty_info} runs under a real pseudo-terminal in both isolations that make
 * one (bwrap's own /dev, the unshare anchor's devpts instance): the argv reaches the command word
 * for word, the terminal has the asked size and variables, stderr comes merged, {@code \n} as
 * {@code \r\n}, and the command's environment is the request's (script's {@code SHELL} not left in it).
 */
class ModalPtyTest {

    @Test
    void aPtyExecRunsUnderATerminalUnderBwrap() throws Exception {
        aPtyExecRunsUnderATerminal("bwrap");
    }

    @Test
    void aPtyExecRunsUnderATerminalUnderUnshare() throws Exception {
        aPtyExecRunsUnderATerminal("unshare");
    }

    private void aPtyExecRunsUnderATerminal(String isolation) throws Exception {
        // A skip with the reason where this host cannot make that isolation (a failure in CI).
        if (isolation.equals("bwrap")) {
            Services.requireProgram("bwrap", "bubblewrap");
        } else {
            try {
                SandboxIsolation.unshare();
            } catch (ConfigurationException e) {
                Services.require(false, e.getMessage());
            }
        }
        ModalFixture f = new ModalFixture("", Map.of("airlock.emulator.isolation", isolation));
        f.start();
        try (ModalClient c = new ModalClient(ModalSettings.from(f.settings(), Map.of()), RetryPolicy.from(f.settings(), ModalSettings.PREFIX));
             ModalSandbox sb = ModalSandbox.create(c, false)) {
            String task = c.taskId();
            String exec = UUID.randomUUID().toString();
            PTYInfo pty = PTYInfo.newBuilder().setEnabled(true).setWinszRows(30).setWinszCols(100).setEnvTerm("xterm-256color")
                    .setEnvColorterm("truecolor").setPtyType(2).setNoTerminateOnIdleStdin(true).build();
            c.routed(10_000, r -> r.taskExecStart(TaskExecStartRequest.newBuilder().setTaskId(task).setExecId(exec)
                    .addAllCommandArgs(List.of("sh", "-c", "printf '%s|' \"$@\"; tty; stty size; echo $TERM $COLORTERM ${SHELL-unset};"
                            + " echo e >&2", "sh", "a b", "it's", "$HOME"))
                    .setStdoutConfig(1).setStderrConfig(1).setPtyInfo(pty).build()));
            TaskExecWaitResponse w = c.routed(60_000, r -> r.taskExecWait(TaskExecWaitRequest.newBuilder().setTaskId(task)
                    .setExecId(exec).build()));
            assertEquals(0, w.getCode(), isolation);
            String out = read(c, task, exec, 0);
            assertTrue(out.matches("a b\\|it's\\|\\$HOME\\|/dev/pts/[0-9]+\r\n30 100\r\nxterm-256color truecolor unset\r\ne\r\n"),
                    isolation + ": " + out);
            assertEquals("", read(c, task, exec, 1), isolation);
        } finally {
            f.served.close();
        }
    }

    /** Stdout (fd 0) or stderr (fd 1) of a finished exec, whole. */
    private static String read(ModalClient c, String task, String exec, int fd) {
        return c.routed(30_000, r -> {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            Iterator<TaskExecStdioReadResponse> it = r.taskExecStdioRead(TaskExecStdioReadRequest.newBuilder().setTaskId(task)
                    .setExecId(exec).setFileDescriptor(fd).build());
            it.forEachRemaining(m -> b.writeBytes(m.getData().toByteArray()));
            return b.toString(StandardCharsets.UTF_8);
        });
    }
}
