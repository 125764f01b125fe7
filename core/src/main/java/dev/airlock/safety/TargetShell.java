package dev.airlock.safety;

import java.io.IOException;
import java.util.Optional;

/**
 * Runs one of Airlock's own small POSIX {@code sh} scripts on the target (never through the
 * command guard) and returns its standard output. The safety rules use it to resolve paths on the
 * target, where symlinks and homes are real.
 */
@FunctionalInterface
public interface TargetShell {

    /** @throws IOException when the script could not run or exited non-zero */
    byte[] run(String script) throws IOException;

    /**
     * The target's paths answered in this JVM, when the target's file system is this host's as the
     * JVM sees it ({@link dev.airlock.spi.Backend#hostView}): the resolution scripts' answers
     * without their process. Empty, the default, runs the scripts.
     */
    default Optional<HostPaths> hostPaths() {
        return Optional.empty();
    }
}
