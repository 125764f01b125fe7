package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import dev.airlock.tck.HostProcesses;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Commands that leave a background job behind ({@code sleep 120 & echo hi}), without isolation
 * (under bubblewrap the pid namespace ends them anyway): each job ends with its exec, wherever its
 * output goes, and holds no thread after it. Before, they ran on until close, each holding two
 * pump threads, so enough of them refused every later exec.
 */
class LeftoverJobsTest {
    @TempDir
    Path dir;

    @ParameterizedTest(name = "sleep 120 {0} &")
    @ValueSource(strings = {"", ">/dev/null 2>&1"})
    void leftoverJobsEndWithTheirExec(String redirect) throws Exception {
        Path pids = dir.resolve("jobs.pid");
        try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.local.isolation", "none",
                "airlock.exec.output-grace", "100ms"))) {
            for (int i = 0; i < 12; i++) {
                ExecResult r = env.exec(ExecRequest.of("sleep 120 " + redirect + " & echo $! >> '" + pids + "'; echo hi; exit 3"));
                assertEquals(3, r.exitCode(), "run " + i + ": " + r.stderr().text());
                assertEquals("hi\n", r.stdout().text());
                long pid = jobs(pids).get(i);
                assertFalse(HostProcesses.runs(pid), "run " + i + ": the job " + pid + " outlived its exec's result");
            }
            long until = System.nanoTime() + 20_000_000_000L;
            while (pumpThreads() > 0) {
                assertTrue(System.nanoTime() < until, "the ended jobs' pumps still hold " + pumpThreads() + " threads");
                Thread.sleep(50);
            }
        } finally {
            for (long pid : jobs(pids)) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    private static List<Long> jobs(Path pids) throws IOException {
        return Files.exists(pids) ? Files.readAllLines(pids).stream().map(String::strip).filter(l -> !l.isEmpty())
                .map(Long::parseLong).toList() : List.of();
    }

    /** Threads of this JVM in an output pump's read loop. */
    private static long pumpThreads() {
        return Thread.getAllStackTraces().entrySet().stream().filter(e -> e.getKey().isAlive())
                .filter(e -> Arrays.stream(e.getValue()).anyMatch(f -> f.getClassName().equals("dev.airlock.exec.OutputPump")
                        && f.getMethodName().equals("run")))
                .count();
    }
}
