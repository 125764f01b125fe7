package dev.airlock.cli;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

import static dev.airlock.cli.Airlock.airlock;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** SIGTERM and SIGINT during exec cancel the command, close the environment and leave no process behind. */
class SignalsIT {

    @Test
    void sigtermDuringExecExits143AndLeavesNoProcess() throws Exception {
        String seconds = marker();
        Process p = airlock("exec", "-n", "sleep " + seconds + " & sleep " + seconds).start();
        Processes.awaitRunning(2, "sleep", seconds);

        signal(p, "TERM"); // not Process.destroy(): that also closes our ends of its pipes

        Airlock.Result r = finish(p);
        assertEquals(143, r.exit(), r::toString);
        Processes.assertNoneRunning("sleep", seconds);
    }

    @Test
    void sigintDuringExecExits130AndLeavesNoProcess() throws Exception {
        // A process started with SIGINT ignored (a background job of a non-interactive shell) keeps
        // ignoring it, and so do its children: asked before anything starts, so a skip leaves nothing running.
        Assumptions.assumeFalse(ignores(ProcessHandle.current().pid(), 2),
                "this test JVM was started with SIGINT ignored, so its children ignore it too");
        String seconds = marker();
        Process p = airlock("exec", "-n", "sleep " + seconds + " & sleep " + seconds).start();
        Processes.awaitRunning(2, "sleep", seconds);

        signal(p, "INT");

        Airlock.Result r = finish(p);
        assertEquals(130, r.exit(), r::toString);
        Processes.assertNoneRunning("sleep", seconds);
    }

    @Test
    void sigtermDuringWriteExits143AndLeavesNeitherFileNorTempFile(@TempDir Path dir) throws Exception {
        Path target = dir.resolve("out.bin");

        Airlock.Result r = sigtermDuringWriteTo(target);

        assertEquals(143, r.exit(), r::toString);
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(List.of(), left.toList(), "a cancelled write leaves nothing in the directory");
        }
    }

    @Test
    void sigtermDuringWriteOverAFileKeepsItsOldBytesAndLeavesNoTempFile(@TempDir Path dir) throws Exception {
        Path target = dir.resolve("kept.txt");
        Files.writeString(target, "old\n");

        Airlock.Result r = sigtermDuringWriteTo(target);

        assertEquals(143, r.exit(), r::toString);
        assertEquals("old\n", Files.readString(target), "a cancelled write leaves the old file whole");
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(List.of(target), left.toList(), "a cancelled write leaves no temp file");
        }
    }

    /** {@code ./airlock write TARGET} given 100 kB with its stdin then left open, and a SIGTERM once the temp file is there. */
    private static Airlock.Result sigtermDuringWriteTo(Path target) throws Exception {
        Process p = airlock("write", target.toString()).start();
        p.getOutputStream().write(new byte[100_000]); // and then our stdin stays open: the write is in progress
        p.getOutputStream().flush();
        awaitTempFile(target.getParent());

        signal(p, "TERM");

        return finish(p);
    }

    private static void awaitTempFile(Path dir) throws Exception {
        long until = System.nanoTime() + 60_000_000_000L;
        while (true) {
            try (Stream<Path> s = Files.list(dir)) {
                if (s.anyMatch(f -> f.getFileName().toString().startsWith(".airlock-write-"))) {
                    return;
                }
            }
            if (System.nanoTime() > until) {
                throw new AssertionError("the write never started in " + dir);
            }
            Thread.sleep(20);
        }
    }

    private static void signal(Process p, String name) throws Exception {
        int rc = new ProcessBuilder("kill", "-s", name, Long.toString(p.pid())).inheritIO().start().waitFor();
        assertEquals(0, rc, "kill -s " + name + " failed");
    }

    /** A sleep length no other process on this machine uses, such as 3171.482913. */
    private static String marker() {
        return "3171." + (100000 + ThreadLocalRandom.current().nextInt(900000));
    }

    private static Airlock.Result finish(Process p) {
        return Airlock.finish(p, CompletableFuture.supplyAsync(() -> Airlock.readAll(p.getInputStream())),
                CompletableFuture.supplyAsync(() -> Airlock.readAll(p.getErrorStream())), CompletableFuture.completedFuture(null));
    }

    private static boolean ignores(long pid, int signal) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("SigIgn:")) {
                return new BigInteger(line.substring(7).trim(), 16).testBit(signal - 1);
            }
        }
        return false;
    }
}
