package dev.airlock.local;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The survivor search reads only the processes forked since a command's launch, and the /proc files it needs in full. */
class ProcfsTest {
    @Test
    void aSysctlFileIsReadWhole() throws Exception {
        // pid_max has several digits on every Linux (at least 301); reading it byte by byte gave its first one.
        String pidMax = Procfs.read(Path.of("/proc/sys/kernel/pid_max")).strip();
        assertTrue(Long.parseLong(pidMax) > 300, "pid_max read as " + pidMax);
    }

    @Test
    void aSurvivorSearchAfterALaunchSkipsOlderProcesses() throws Exception {
        // An older process in a session of its own: nothing else the machine forks meanwhile can be in
        // it (this JVM's session may be 0, shared by every process of a container, as in CI).
        Process older = new ProcessBuilder("setsid", "sleep", "30").start();
        try {
            long sid = older.pid();
            awaitSession(older.pid(), sid);
            assertTrue(Procfs.anyWith(3, sid, -1, -1), "a full search finds the older process in its own session");
            long forks = Procfs.forks();
            Process child = new ProcessBuilder("true").start();
            child.waitFor();
            // The older process was forked before the child, so it is no candidate: the search must not read it.
            assertFalse(Procfs.anyWith(3, sid, child.pid(), forks), "the search from pid " + child.pid()
                    + " found the process of session " + sid + ", forked before it, so it read older processes");
        } finally {
            older.destroyForcibly();
            older.waitFor();
        }
    }

    /** setsid execs sleep in the same process once its session is made; wait for that. */
    private static void awaitSession(long pid, long sid) throws InterruptedException {
        Path proc = Path.of("/proc", Long.toString(pid));
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (Procfs.statField(proc, 3).map(Long.toString(sid)::equals).orElse(false)) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("setsid sleep " + pid + " did not lead its own session within 20 s");
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
