package dev.airlock.exec;

import dev.airlock.ExecRequest;
import dev.airlock.StdinMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What closing an environment leaves behind: its worker threads end, the audit log is complete and
 * released, and the backend is closed once however often the environment is.
 */
class CloseTest {
    private static final Duration HANG = HostBackend.HANG;

    @TempDir
    Path dir;

    private final List<HostBackend> opened = new ArrayList<>();

    private HostBackend open(String... more) {
        HostBackend b = new HostBackend(HostBackend.settings(dir, more), StdinMode.PIPE, true, List.of());
        opened.add(b);
        return b;
    }

    @AfterEach
    void cleanUp() {
        HostBackend.closeAll(opened);
    }

    @Test
    void closeEndsTheEnvironmentsThreads() throws Exception {
        HostBackend b = open();
        b.exec(ExecRequest.of("true"));
        long before = threads(b);
        assertTrue(before > 0, "the environment runs worker threads");
        b.env.close();
        long until = System.nanoTime() + HANG.toNanos();
        while (threads(b) > 0) {
            assertTrue(System.nanoTime() < until, threads(b) + " of the environment's threads outlived close()");
            Thread.sleep(20);
        }
    }

    @Test
    void closeIsTheAuditLogsLastLineAndReleasesTheFile() throws Exception {
        Path audit = dir.resolve("audit.jsonl");
        HostBackend b = open("airlock.audit.file", audit.toString());
        b.exec(ExecRequest.of("true"));
        assertTrue(holds(audit), "the audit log is open while the environment is");
        b.env.close();
        List<String> lines = Files.readAllLines(audit);
        assertTrue(lines.get(lines.size() - 1).contains("\"close\""), "last line: " + lines.get(lines.size() - 1));
        assertFalse(holds(audit), "the audit log's file stayed open after close()");
    }

    @Test
    void theBackendIsClosedOnceHoweverOftenTheEnvironmentIs() {
        HostBackend b = open();
        b.env.close();
        b.env.close();
        b.closeFromHook();
        assertEquals(1, b.closes.get());
        assertTrue(b.env.isClosed());
    }

    private static long threads(HostBackend b) {
        String prefix = "airlock-" + b.name() + "-";
        // Only this environment's: the names carry the backend's name, and the earlier tests' are gone or going.
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix) && t.isAlive()).count();
    }

    private static boolean holds(Path file) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.anyMatch(fd -> {
                try {
                    return Files.readSymbolicLink(fd).equals(file);
                } catch (IOException e) {
                    return false; // closed meanwhile
                }
            });
        }
    }

    /** The JVM's shutdown hook closes the environment: closed, and refusing new execs, as after close(). */
    @Test
    void theShutdownHooksCloseLeavesTheEnvironmentClosed() {
        HostBackend b = open();
        b.closeFromHook();
        assertTrue(b.env.isClosed());
        assertEquals(1, b.closes.get());
        org.junit.jupiter.api.Assertions.assertThrows(dev.airlock.EnvironmentClosedException.class,
                () -> b.exec(ExecRequest.of("true")));
    }
}
