package dev.airlock.local;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The survivor search reads only the processes forked since a command's launch, and the /proc files it needs in full. */
class ProcfsTest {
    private static final long SELF = ProcessHandle.current().pid();

    @Test
    void aSysctlFileIsReadWhole() throws Exception {
        // pid_max has several digits on every Linux (at least 301); reading it byte by byte gave its first one.
        String pidMax = Procfs.read(Path.of("/proc/sys/kernel/pid_max")).strip();
        assertTrue(Long.parseLong(pidMax) > 300, "pid_max read as " + pidMax);
    }

    @Test
    void aSurvivorSearchAfterALaunchSkipsOlderProcesses() throws Exception {
        long sid = Long.parseLong(Procfs.statField(Path.of("/proc", Long.toString(SELF)), 3).orElseThrow());
        assertTrue(Procfs.anyWith(3, sid, -1, -1), "a full search finds this JVM in its own session");
        long forks = Procfs.forks();
        Process child = new ProcessBuilder("true").start();
        child.waitFor();
        // This JVM is older than the child, so it is no candidate: the search must not read it.
        assertFalse(Procfs.anyWith(3, sid, child.pid(), forks), "the search from pid " + child.pid()
                + " found a process of session " + sid + " (this JVM is " + SELF + "), so it read older processes");
    }

    @Test
    void aSurvivorSearchFindsAProcessForkedSinceTheLaunch() throws Exception {
        long forks = Procfs.forks();
        // A session leader that stays, and in its session a child that outlives it.
        Process leader = new ProcessBuilder("setsid", "sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!").start();
        long child = Long.parseLong(new String(leader.getInputStream().readAllBytes()).strip());
        leader.waitFor();
        try {
            assertTrue(Procfs.anyWith(3, leader.pid(), leader.pid(), forks), "the survivor " + child + " was not found");
        } finally {
            ProcessHandle.of(child).ifPresent(ProcessHandle::destroyForcibly);
        }
    }
}
