package dev.airlock.exec;

import dev.airlock.Capabilities;
import dev.airlock.ExecRequest;
import dev.airlock.StdinMode;
import dev.airlock.exec.HostBackend.Fault;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The host steps a backend may answer itself instead of the core's scripts (the target probe, the
 * profile home, the private dir's removal at close): an answer is used and saves the script, and a
 * step that fails, or fails at its deadline with its thread still interrupted, falls back to the
 * script with nothing lost.
 */
class HostStepsTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();


    /** A backend answering the host steps, its profile home under the test's dir; {@code setUp} runs before it opens. */
    private HostBackend open(Consumer<HostBackend> setUp) {
        HostBackend b = new HostBackend(HostBackend.settings(dir, "airlock.home-mode", "profile",
                "airlock.home", dir.resolve("airlock-home").toString()),
                Capabilities.pipe().withStdinMode(StdinMode.PIPE).withNativeEnv(true), List.of(), false, x -> {
                    x.answersHostSteps = true;
                    setUp.accept(x);
                });
        opened.add(b);
        return b;
    }

    private static Path home(HostBackend b) {
        return Path.of(b.target().home());
    }

    @Test
    void answeredStepsAreUsedAndNoScriptRunsToOpen() {
        HostBackend b = open(x -> { });
        assertEquals(HostBackend.ANSWERED_HOSTNAME, b.target().hostname(), "the backend's probe answer was not used");
        assertEquals(List.of("probe", "makeHome"), b.hostSteps);
        assertTrue(Files.isDirectory(home(b)));
        assertEquals(0, b.scripts.get(), "a script ran although the backend answered every step at open");
        assertEquals("ran\n", b.exec(ExecRequest.of("echo ran")).stdout().text());
    }

    @Test
    void aFailedProbeFallsBackToTheScript() {
        HostBackend b = open(x -> x.probe = Fault.FAIL);
        assertNotEquals(HostBackend.ANSWERED_HOSTNAME, b.target().hostname());
        assertTrue(Files.isDirectory(Path.of(b.target().privateDir())), "the script's private dir is missing");
        assertEquals("ran\n", b.exec(ExecRequest.of("echo ran")).stdout().text());
    }

    /** The deadline's interrupt is the hook's, not the script's that runs instead: the environment still opens. */
    @Test
    void aProbeInterruptedAtItsDeadlineFallsBackToTheScript() {
        HostBackend b = open(x -> x.probe = Fault.INTERRUPTED);
        assertNotEquals(HostBackend.ANSWERED_HOSTNAME, b.target().hostname());
        assertEquals("ran\n", b.exec(ExecRequest.of("echo ran")).stdout().text());
    }

    @Test
    void aFailedProfileHomeIsMadeByTheScript() {
        HostBackend b = open(x -> x.makeHome = Fault.FAIL);
        assertTrue(Files.isDirectory(home(b)), "the profile home was never made");
        assertEquals(home(b) + "\n", b.exec(ExecRequest.of("echo \"$HOME\"")).stdout().text());
    }

    @Test
    void aProfileHomeInterruptedAtItsDeadlineIsMadeByTheScript() {
        HostBackend b = open(x -> x.makeHome = Fault.INTERRUPTED);
        assertTrue(Files.isDirectory(home(b)), "the profile home was never made");
        assertEquals("ran\n", b.exec(ExecRequest.of("echo ran")).stdout().text());
    }

    @Test
    void theBackendRemovesThePrivateDirAtCloseWithoutAScript() {
        HostBackend b = open(x -> { });
        Path priv = Path.of(b.target().privateDir());
        int before = b.scripts.get();
        b.env.close();
        assertFalse(Files.exists(priv), "the private dir outlived the close");
        assertTrue(b.hostSteps.contains("removePrivateDir"));
        assertEquals(before, b.scripts.get(), "rm -rf ran although the backend removed the private dir");
    }

    @Test
    void aFailedRemovalIsDoneByTheScript() {
        HostBackend b = open(x -> x.removePrivateDir = Fault.FAIL);
        Path priv = Path.of(b.target().privateDir());
        b.env.close();
        assertFalse(Files.exists(priv), "the private dir outlived the close");
    }

    /** A removal stuck past the stop bound is interrupted; {@code rm -rf} removes the dir and the close returns. */
    @Test
    void aStuckRemovalIsInterruptedAndTheScriptRemovesTheDir() throws Exception {
        HostBackend b = open(x -> x.removePrivateDir = Fault.STALL);
        Path priv = Path.of(b.target().privateDir());
        Thread closer = new Thread(b.env::close);
        closer.start();
        closer.join(HostBackend.HANG.toMillis());
        assertFalse(closer.isAlive(), "close() waited on a stuck removal");
        assertEquals(List.of("removePrivateDir"), b.interrupted);
        assertFalse(Files.exists(priv), "the private dir outlived the close");
    }

    /** A backend that declines the host steps (answers false) leaves them to the scripts: the home is made, the dir removed. */
    @Test
    void declinedHostStepsAreDoneByTheScripts() {
        HostBackend b = open(x -> x.answersHostSteps = false);
        assertTrue(Files.isDirectory(home(b)), "the profile home was never made");
        Path priv = Path.of(b.target().privateDir());
        b.env.close();
        assertFalse(Files.exists(priv), "the private dir outlived the close");
    }
}
