package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.StdinMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A cancelled command whose launcher record has not come (a loaded machine) on a backend that
 * knows no group of its own and whose kill signals the group (docker's): the kill cannot reach
 * it without the group, so the core finds the group by the exec's nonce and kills the tree.
 * A backend whose kill reaches the command without a group (a sandbox API's per-exec kill) is
 * called as before, with no lookup.
 */
class LateRecordKillTest {
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
            HostBackend.closeAll(List.of(b));
        }
    }

    /** Starts {@code sleep 60} under a shell, without its record; returns the shell's and the sleep's pids once both run. */
    private long[] startWithoutRecord(Execution[] e) throws Exception {
        Path shell = dir.resolve("shell.pid");
        Path child = dir.resolve("child.pid");
        e[0] = b.start(ExecRequest.of("echo $$ > " + shell + ".tmp; mv " + shell + ".tmp " + shell
                + "; sleep 60 & echo $! > " + child + ".tmp; mv " + child + ".tmp " + child + "; wait"));
        long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30); // a bound, not a measure
        while (!(Files.exists(shell) && Files.exists(child)) && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        long[] pids = {Long.parseLong(Files.readString(shell).strip()), Long.parseLong(Files.readString(child).strip())};
        started.add(pids[0]);
        started.add(pids[1]);
        return pids;
    }

    @Test
    void aCancelBeforeTheRecordCameIsCarriedOutThroughTheGroupFoundByTheNonce() throws Exception {
        // The backend's answer is read once, at open, as a backend's capabilities are.
        b = new HostBackend(HostBackend.settings(dir), dev.airlock.Capabilities.pipe().withStdinMode(StdinMode.PIPE).withNativeEnv(true),
                List.of(), false, h -> h.killsWithoutGroup = false);
        b.recordNeverComes = true;
        Execution[] e = new Execution[1];
        long[] pids = startWithoutRecord(e);
        e[0].cancel();
        ExecResult r = HostBackend.within(e[0]);
        assertTrue(r.cancelled(), "cancelled");
        assertTrue(gone(pids[0]), "the command's shell " + pids[0] + " outlived the cancel; signals " + b.signals);
        assertTrue(gone(pids[1]), "its child " + pids[1] + " outlived the cancel");
        assertTrue(b.signals.stream().anyMatch(s -> s.equals("TERM " + pids[0])), "signalled by the group found: " + b.signals);
        assertFalse(b.signals.stream().anyMatch(s -> s.endsWith(" -1")), "no kill without a group was called: " + b.signals);
    }

    @Test
    void withoutANativeKillerTheCoresScriptsKillTheGroupFoundByTheNonce() throws Exception {
        b = new HostBackend(HostBackend.settings(dir), dev.airlock.Capabilities.pipe().withStdinMode(StdinMode.PIPE).withNativeEnv(true),
                List.of(), true);
        b.recordNeverComes = true;
        Execution[] e = new Execution[1];
        long[] pids = startWithoutRecord(e);
        e[0].cancel();
        assertTrue(HostBackend.within(e[0]).cancelled(), "cancelled");
        assertTrue(gone(pids[0]), "the command's shell " + pids[0] + " outlived the cancel");
        assertTrue(gone(pids[1]), "its child " + pids[1] + " outlived the cancel");
    }

    @Test
    void aBackendWhoseKillNeedsNoGroupIsCalledWithoutOne() throws Exception {
        b = new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, true, List.of());
        b.recordNeverComes = true;
        Execution[] e = new Execution[1];
        startWithoutRecord(e);
        int lookups = b.scriptTexts.size();
        e[0].cancel();
        HostBackend.within(e[0]);
        assertEquals("TERM -1", b.signals.isEmpty() ? "" : b.signals.get(0), "its own kill, with no group: " + b.signals);
        assertTrue(b.scriptTexts.subList(lookups, b.scriptTexts.size()).stream().noneMatch(t -> t.contains("grep -lsF")),
                "no lookup by the nonce ran");
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
