package dev.airlock.safety;

import java.io.IOException;

/**
 * Runs one of Airlock's own small POSIX {@code sh} scripts on the target (never through the
 * command guard) and returns its standard output. The safety rules use it to resolve paths on the
 * target, where symlinks and homes are real.
 */
@FunctionalInterface
public interface TargetShell {

    /** @throws IOException when the script could not run or exited non-zero */
    byte[] run(String script) throws IOException;
}
