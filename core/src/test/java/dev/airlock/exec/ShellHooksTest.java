package dev.airlock.exec;

import dev.airlock.Capabilities;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.StagingException;
import dev.airlock.StdinMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A backend that writes only {@code launch} (no stager, no killer): the core stages, removes staged
 * files, reads process groups and signals them through its own shell scripts, and each of those
 * does what the native hooks do.
 */
class ShellHooksTest {
    private static final Duration HANG = HostBackend.HANG;

    @TempDir
    Path dir;

    private HostBackend b;

    private HostBackend open() {
        b = new HostBackend(HostBackend.settings(dir), Capabilities.pipe().withStdinMode(StdinMode.PAYLOAD), List.of(), true);
        return b;
    }

    @AfterEach
    void cleanUp() {
        if (b != null) {
            HostBackend.closeAll(List.of(b));
        }
    }

    private static ExecResult within(Execution e) throws InterruptedException {
        return HostBackend.within(e);
    }

    @Test
    void stdinStagedByTheShellArrivesByteExactAndIsGoneAfterwards() throws Exception {
        open();
        byte[] data = {0, (byte) 0xff, 'a', '\n', (byte) 0xc3, 0, 'z'};
        ExecResult r = b.exec(ExecRequest.builder("cat").stdin(Payload.of(data)).build());
        assertEquals(0, r.exitCode(), r.stderr().text());
        assertArrayEquals(data, r.stdout().bytes());
        assertEquals(List.of(), b.stagedLeft());
        assertEquals(List.of(), b.stagedPaths, "the backend's own stager was used");
    }

    @Test
    void aStagingTheShellCannotWriteIsAStagingErrorWithItsReason() throws Exception {
        open();
        Path staging = Path.of(b.target().stagingDir());
        try (java.util.stream.Stream<Path> all = Files.walk(staging)) {
            for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
        StagingException x = assertThrows(StagingException.class,
                () -> b.exec(ExecRequest.builder("cat").stdin(Payload.ofUtf8("x")).build()));
        assertTrue(x.getMessage().contains("cat exited"), x.getMessage());
    }

    @Test
    void aTimeoutKillsATreeThatIgnoresTermThroughTheShellsSignals() throws Exception {
        open();
        Path pidFile = dir.resolve("child.pid");
        ExecResult r = within(b.start(ExecRequest.builder("trap '' TERM; sleep 30 & echo $! > " + pidFile + "; wait")
                .timeout(Duration.ofSeconds(1)).build()));
        assertTrue(r.timedOut());
        assertEquals(ExecResult.EXIT_TIMEOUT, r.exitCode());
        long child = Long.parseLong(Files.readString(pidFile).strip());
        long until = System.nanoTime() + HANG.toNanos();
        while (HostBackend.alive(child)) {
            assertTrue(System.nanoTime() < until, "the grandchild that ignored SIGTERM outlived the kill");
            Thread.sleep(20);
        }
        assertEquals(List.of(), b.signals, "the backend's own killer was used");
    }

    @Test
    void aCancelBeforeThePrefixRanRemovesTheStagedFilesThroughTheShell() throws Exception {
        open();
        b.slowStart = 30;
        Execution e = b.start(ExecRequest.builder("cat").stdin(Payload.ofUtf8("x")).build());
        b.awaitLaunched();
        assertFalse(b.stagedLeft().isEmpty(), "the stdin was staged");
        e.cancel();
        assertTrue(within(e).cancelled());
        assertEquals(List.of(), b.stagedLeft(), "staged files outlived a kill before the command started");
    }

    /** The shell's kill sends SIGTERM first: a command's TERM trap gets to run. */
    @Test
    void aTimeoutsFirstSignalThroughTheShellIsTerm() throws Exception {
        open();
        Path trapped = dir.resolve("trapped");
        ExecResult r = within(b.start(ExecRequest.builder("trap 'echo term > " + trapped + "; exit 0' TERM; sleep 30 & wait")
                .timeout(Duration.ofSeconds(1)).build()));
        assertTrue(r.timedOut());
        assertEquals("term\n", Files.readString(trapped), "the command got SIGKILL, not SIGTERM");
    }

    /** Without a process group and without a native kill nothing can be signalled: the kill fails saying why. */
    @Test
    void aKillWithoutAProcessGroupFailsSayingWhy() {
        open();
        java.io.IOException x = assertThrows(java.io.IOException.class,
                () -> b.env.hooks().kill(null, java.util.OptionalLong.empty(), false));
        assertTrue(x.getMessage().contains("process group is unknown"), x.getMessage());
    }
}
