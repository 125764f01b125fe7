package dev.airlock.exec;


import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Spill files of captured output beyond the heap part: 0600 files in the JVM's temp dir. Those of
 * results not yet handed out are deleted by close; a result handed out owns its files (deleted by
 * {@link dev.airlock.ExecResult#close()} or when it is garbage collected), so its output stays
 * readable after the environment closed.
 */
final class Spills {
    private final Set<Path> pending = ConcurrentHashMap.newKeySet();

    Path newFile() {
        Path p = OutputCapture.newSpillFile(Path.of(System.getProperty("java.io.tmpdir")));
        pending.add(p);
        return p;
    }

    /** A result took ownership of this file. */
    void delivered(Path p) {
        pending.remove(p);
    }

    void deletePending() {
        for (Path p : pending) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException ignored) {
                // best effort: the files are 0600 and named by random
            }
        }
        pending.clear();
    }
}
