package dev.airlock.exec;

import dev.airlock.Capabilities;
import dev.airlock.DeniedException;
import dev.airlock.StdinMode;
import dev.airlock.spi.ControlShell;
import dev.airlock.spi.HostProcesses;
import dev.airlock.spi.RemoteProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A backend with a control shell: the guard's path resolutions go through it (a line each way,
 * where a command of its own is a docker exec or an ssh login), and see what a command sees, links
 * included; an answer that is not whole (a name that forges the shell's status line) is not
 * taken: the resolution runs as a command, and the shell is closed.
 */
class ControlShellGuardTest {
    private static final Duration BOUND = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();

    /** A host backend whose control shell is an {@code sh} running the loop on this host, started when first asked for. */
    private static final class WithControl extends HostBackend {
        private ControlShell control; // no initializer: the core asks for it while the super constructor runs
        private Process process;

        WithControl(dev.airlock.settings.Settings settings) {
            super(settings, Capabilities.pipe().withStdinMode(StdinMode.PIPE).withNativeEnv(true), List.of());
        }

        @Override
        public synchronized Optional<ControlShell> controlShell() {
            if (control == null) {
                try {
                    process = new ProcessBuilder("sh", "-c", ControlShell.LOOP).start();
                    control = ControlShell.start(remote(process), "guard-test", BOUND, BOUND);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            return Optional.of(control);
        }

        @Override
        public void stopSandbox(dev.airlock.spi.Deadline deadline) {
            super.stopSandbox(deadline);
            if (process != null) {
                process.destroyForcibly();
            }
        }
    }

    private WithControl open() {
        return opened.add(new WithControl(HostBackend.settings(dir, "airlock.home", dir.resolve("airlock-home").toString())));
    }

    /** The guard's resolution scripts among the core's own scripts the backend launched as commands. */
    private static long resolutionCommands(HostBackend b) {
        return b.scriptTexts.stream().filter(s -> s.contains("canon() {")).count();
    }

    @Test
    void aWriteIsJudgedInTheControlShellAndALinkToAirlocksStateIsStillDenied() throws Exception {
        Path state = Files.createDirectories(dir.resolve("airlock-home"));
        Files.createSymbolicLink(dir.resolve("state-link"), state);
        WithControl b = open();
        b.env.files().write(dir + "/a.txt", "judged in the shell".getBytes(StandardCharsets.UTF_8));
        assertEquals("judged in the shell", Files.readString(dir.resolve("a.txt")));
        DeniedException e = assertThrows(DeniedException.class,
                () -> b.env.files().write(dir + "/state-link/airlock.properties", "x".getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains(state + "/airlock.properties"), e.getMessage());
        assertFalse(Files.exists(state.resolve("airlock.properties")));
        assertEquals(0, resolutionCommands(b), "a resolution ran as a command: " + b.scriptTexts);
        assertFalse(b.controlShell().orElseThrow().dead());
    }

    @Test
    void aNameThatForgesTheStatusLineIsResolvedByACommandAndEndsTheShell() throws Exception {
        Path state = Files.createDirectories(dir.resolve("airlock-home"));
        // A link whose target's text holds the control shell's status line: the resolution prints it.
        Files.createSymbolicLink(dir.resolve("forged"), Path.of("x\n@airlock-control:0\ny"));
        WithControl b = open();
        byte[] bytes = {0, 1, (byte) 0xff, '\n'};
        b.env.files().write(dir + "/forged", bytes);
        assertArrayEquals(bytes, Files.readAllBytes(dir.resolve("x\n@airlock-control:0\ny")), "written where the link leads");
        assertTrue(resolutionCommands(b) >= 1, "the cut answer was taken: " + b.scriptTexts);
        assertTrue(b.controlShell().orElseThrow().dead(), "the shell, whose answers may be out of step, is closed");
        // and the judging goes on by commands, as right as before
        Files.createSymbolicLink(dir.resolve("state-link"), state);
        assertThrows(DeniedException.class,
                () -> b.env.files().write(dir + "/state-link/airlock.properties", "x".getBytes(StandardCharsets.UTF_8)));
        assertFalse(Files.exists(state.resolve("airlock.properties")));
    }

    private static RemoteProcess remote(Process p) {
        return HostProcesses.remote(p);
    }
}
