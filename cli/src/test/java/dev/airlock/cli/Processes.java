package dev.airlock.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.fail;

/** Finds processes by their exact argv in /proc, the way a user would check with ps. */
final class Processes {
    private Processes() {
    }

    /** Pids whose argv is exactly {@code argv}. */
    static List<Long> withArgv(String... argv) {
        String want = String.join("\0", argv) + "\0";
        List<Long> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path p : ds) {
                try {
                    if (new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8).equals(want)) {
                        out.add(Long.parseLong(p.getFileName().toString()));
                    }
                } catch (IOException ignored) {
                    // the process ended while we looked
                }
            }
        } catch (IOException e) {
            throw new AssertionError("cannot list /proc: " + e, e);
        }
        return out;
    }

    /** Waits until {@code count} processes run {@code argv} (a hang guard bounds the wait). */
    static void awaitRunning(int count, String... argv) throws InterruptedException {
        long until = System.nanoTime() + 60_000_000_000L;
        while (withArgv(argv).size() < count) {
            if (System.nanoTime() > until) {
                fail("never saw " + count + " processes running " + String.join(" ", argv));
            }
            Thread.sleep(20);
        }
    }

    /**
     * Asserts no process runs {@code argv}. A killed process can take a moment to leave /proc
     * after its parent is gone, so this allows a short settle before failing.
     */
    static void assertNoneRunning(String... argv) throws InterruptedException {
        long until = System.nanoTime() + 5_000_000_000L;
        List<Long> left;
        while (!(left = withArgv(argv)).isEmpty()) {
            if (System.nanoTime() > until) {
                fail("left behind: pids " + left + " running " + String.join(" ", argv));
            }
            Thread.sleep(20);
        }
    }
}
