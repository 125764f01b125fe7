package dev.airlock.modal;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Terminate exactly once under racing close and cancel; up/down keep a sandbox across clients. */
class ModalLifecycleTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    private long terminates() {
        return EMULATOR.served.journal().entries().stream().filter(e -> e.call().startsWith("SandboxTerminate")).count();
    }

    @Test
    void racingClosesAndACancelTerminateOnce() throws Exception {
        long before = terminates();
        Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings().with("airlock.cancel", "sandbox")));
        Execution running = env.start(ExecRequest.of("sleep 30"));
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            int n = i;
            Thread t = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                if (n % 2 == 0) {
                    running.cancel();
                } else {
                    env.close();
                }
            });
            t.start();
            threads.add(t);
        }
        go.countDown();
        for (Thread t : threads) {
            t.join(60_000);
        }
        env.close();
        assertEquals(1, terminates() - before, "SandboxTerminate calls for one environment");
        assertEquals(0, ((dev.airlock.modal.emulator.ModalEmulator) EMULATOR.served.emulator()).liveSandboxes());
    }

    @Test
    void upKeepsASandboxAcrossClientsAndDownEndsIt() {
        ModalProvider p = new ModalProvider();
        String id = p.up(EMULATOR.settings());
        var attach = EMULATOR.settings().with(ModalSettings.SANDBOX_ID, id);
        try (Environment a = p.open(OpenContext.of(attach))) {
            a.files().write("/tmp/kept.txt", dev.airlock.Payload.ofUtf8("kept"));
        }
        try (Environment b = p.open(OpenContext.of(attach))) {
            ExecResult r = b.exec(ExecRequest.of("cat /tmp/kept.txt"));
            assertEquals("kept", new String(r.stdout().bytes(), StandardCharsets.UTF_8));
        }
        p.down(EMULATOR.settings(), id);
        assertThrows(dev.airlock.AirlockException.class, () -> p.open(OpenContext.of(attach)).close());
    }

    @Test
    void aStdinWriteToAnExitedCommandIsReportedNotHung() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings()))) {
            ExecResult r = env.exec(ExecRequest.builder("head -c 10").stdin(new byte[8 * 1024 * 1024]).build());
            assertEquals(0, r.exitCode());
            assertEquals(10, r.stdout().size());
        }
    }
}
