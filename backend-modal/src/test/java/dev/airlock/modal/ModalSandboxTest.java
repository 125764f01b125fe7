package dev.airlock.modal;

import dev.airlock.remote.RetryPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.ProcessEnd;
import dev.airlock.spi.StdinClosedException;

import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client's sandbox and process layer against the emulator, below the core. */
class ModalSandboxTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    private static ModalClient client(Map<String, String> extra) {
        var s = EMULATOR.settings().with(extra);
        return new ModalClient(ModalSettings.from(s, Map.of()), RetryPolicy.from(s, ModalSettings.PREFIX));
    }

    /** A stdin write to a command that has exited is refused at once as a closed stdin: not retried, not hung. */
    @Test
    void aStdinWriteToAnExitedCommandIsReportedAsClosedStdin() throws Exception {
        try (ModalClient c = client(Map.of()); ModalSandbox sb = ModalSandbox.create(c, false)) {
            ModalProcess p = sb.exec(List.of("sh", "-c", "exit 4"), Map.of());
            assertEquals(4, p.waitFor());
            long start = System.nanoTime();
            StdinClosedException e = assertThrows(StdinClosedException.class,
                    () -> p.writeStdin(0, new byte[4096], 4096, false, Deadline.in(Duration.ofMinutes(5))));
            assertTrue(e.getMessage().contains("no longer reads its stdin"), e.getMessage());
            assertTrue(System.nanoTime() - start < java.util.concurrent.TimeUnit.SECONDS.toNanos(20),
                    "the refused write took " + (System.nanoTime() - start) / 1_000_000 + " ms");
        }
    }

    /**
     * The router answers {@code signal} for a command a signal ended and {@code code} for one that
     * exited, even {@code exit 137}: the client ends the first {@link ProcessEnd.Signalled} and
     * the second {@link ProcessEnd.Exited}, both 137 as a shell reports them (Airlock's exit code).
     */
    @Test
    void aSignalEndIsSignalledAndAnExitOf137IsAnExit() throws Exception {
        for (String family : List.of("v2", "v1")) {
            try (ModalClient c = client(Map.of(ModalSettings.FAMILY, family)); ModalSandbox sb = ModalSandbox.create(c, false)) {
                assertEquals(ProcessEnd.signalled(9), end(sb, "kill -KILL $$"), family);
                assertEquals(ProcessEnd.signalled(15), end(sb, "kill -TERM $$"), family);
                assertEquals(ProcessEnd.exited(137), end(sb, "exit 137"), family);
                assertEquals(137, end(sb, "kill -KILL $$").exitCode());
            }
        }
    }

    /** As the client runs a command: under {@link ModalBackend#WRAPPER}, which execs the shell (its pid is the exec's). */
    private static ProcessEnd end(ModalSandbox sb, String script) throws Exception {
        ModalProcess p = sb.exec(List.of("sh", "-c", ModalBackend.WRAPPER, "airlock", ModalBackend.WRAPPER, "sh", script, ""), Map.of());
        p.writeStdin(0, new byte[0], 0, true, Deadline.in(Duration.ofMinutes(1)));
        return p.awaitEnd();
    }

    /** Through the core: a command a signal ended reads 128+N, as on every backend; an exit reads its code. */
    @Test
    void aSignalledCommandsExitCodeIs128PlusTheSignal() {
        try (Environment env = new ModalProvider().open(OpenContext.of(EMULATOR.settings()))) {
            ExecResult killed = env.exec(ExecRequest.of("echo before; kill -TERM $$; echo after"));
            assertEquals(143, killed.exitCode());
            assertEquals("before\n", new String(killed.stdout().bytes(), StandardCharsets.UTF_8));
            assertEquals(137, env.exec(ExecRequest.of("exit 137")).exitCode());
        }
    }

    @Test
    void execLeadsItsGroupStreamsStdinByOffsetAndExits() throws Exception {
        for (String family : List.of("v2", "v1")) {
            try (ModalClient c = client(Map.of(ModalSettings.FAMILY, family)); ModalSandbox sb = ModalSandbox.create(c, false)) {
                // The shell prints whether it leads its own group (pid == pgid), then its stdin.
                ModalProcess p = sb.exec(List.of("sh", "-c", ModalBackend.WRAPPER, "airlock", ModalBackend.WRAPPER, "sh",
                        "set -- $(cut -d' ' -f1,5 /proc/$$/stat); [ \"$1\" = \"$2\" ] && echo leader; cat; echo err >&2; exit 3", ""),
                        Map.of());
                Deadline d = Deadline.in(Duration.ofMinutes(1));
                byte[] hello = "hello".getBytes(StandardCharsets.UTF_8);
                p.writeStdin(0, hello, 3, false, d);
                p.writeStdin(0, hello, 3, false, d); // a resent chunk at the acknowledged offset: acknowledged, not appended
                p.writeStdin(3, "lo".getBytes(StandardCharsets.UTF_8), 2, false, d);
                p.writeStdin(5, new byte[0], 0, true, d);
                assertEquals("leader\nhello", new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8), family);
                assertEquals("err\n", new String(p.stderr().readAllBytes(), StandardCharsets.UTF_8));
                assertEquals(3, p.waitFor());
            }
        }
        assertEquals(0, ((dev.airlock.modal.emulator.ModalEmulator) EMULATOR.served.emulator()).liveSandboxes());
    }
}
