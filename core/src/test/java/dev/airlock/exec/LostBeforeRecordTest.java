package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.ExecRequest;
import dev.airlock.Execution;
import dev.airlock.StdinMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A connection lost right after the command started, before its launcher record (which names the
 * process group) reached the client, as an ssh cut can land: the tree is still found and killed.
 */
class LostBeforeRecordTest {
    @TempDir
    Path dir;

    private HostBackend b;
    private final List<Long> started = new java.util.ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        for (long pid : started) {
            new ProcessBuilder("kill", "-KILL", Long.toString(pid)).start().waitFor();
        }
        if (b != null) {
            b.env.close();
        }
    }

    @Test
    void aCommandWhoseRecordNeverCameIsFoundByItsNonceAndKilledGrandchildrenIncluded() throws Exception {
        b = new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, true, List.of());
        Path shell = dir.resolve("shell.pid");
        Path child = dir.resolve("child.pid");
        Path runs = dir.resolve("runs");
        b.lostBeforeRecordWhen = child;
        Execution e = b.start(ExecRequest.of("echo $$ > " + shell + "; echo run >> " + runs
                + "; sleep 60 & echo $! > " + child + ".tmp; mv " + child + ".tmp " + child + "; wait"));
        BackendException lost = assertThrows(BackendException.class, e::await);
        assertTrue(lost.getMessage().contains("not run again"), lost.getMessage());
        long leader = Long.parseLong(Files.readString(shell).strip());
        long grandchild = Long.parseLong(Files.readString(child).strip());
        started.add(leader);
        started.add(grandchild);
        assertTrue(gone(leader), "the command's shell " + leader + " outlived the lost connection");
        assertTrue(gone(grandchild), "its child " + grandchild + " outlived the lost connection");
        assertEquals("run\n", Files.readString(runs), "the command ran again");
    }

    /** Dead or a zombie nobody reaped yet (the orphaned sleep's reaper may be slow). */
    private static boolean gone(long pid) throws InterruptedException {
        for (int i = 0; i < 500; i++) {
            if (!HostBackend.alive(pid)) {
                return true;
            }
            Thread.sleep(20);
        }
        return false;
    }
}
