package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Commands that leave a background job holding their output ({@code sleep 120 & echo hi}): the
 * jobs must not hold the environment's threads, or enough of them refuse every later exec.
 */
class LeftoverJobsTest {
    @TempDir
    Path dir;

    /** At most this many finished execs keep their pump threads (two each); past it the oldest job is reaped. */
    private static final int HOLDING = 8;

    @Test
    void leftoverJobsHoldABoundedNumberOfThreads() throws Exception {
        Path pids = dir.resolve("jobs.pid");
        try (Environment env = Environments.open(Settings.of("airlock.container", "no", "airlock.local.isolation", "none",
                "airlock.exec.output-grace", "100ms"))) {
            for (int i = 0; i < 30; i++) {
                ExecResult r = env.exec(ExecRequest.of("sleep 120 & echo $! >> '" + pids + "'; echo hi"));
                assertTrue(r.stdout().text().startsWith("hi"), "run " + i + ": " + r.stdout().text() + r.stderr().text());
            }
            long until = System.nanoTime() + 20_000_000_000L;
            while (pumpThreads() > 2 * HOLDING) {
                assertTrue(System.nanoTime() < until, "the leftover jobs still hold " + pumpThreads() + " pump threads");
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
