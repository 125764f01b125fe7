package dev.airlock;

import java.time.Duration;

/**
 * What a finished command did: its exit code and its output, exactly as written.
 *
 * <p>Exit codes follow the shell: 124 after a timeout, 130 after a cancel, 128+N when a signal N
 * ended it, 126 when the working directory could not be entered.
 *
 * @param exitCode      the command's exit status
 * @param stdout        captured stdout (empty when streamed to a caller's sink)
 * @param stderr        captured stderr (empty when streamed to a caller's sink)
 * @param timedOut      the timeout killed it
 * @param cancelled     {@link Execution#cancel()} or a close stopped it
 * @param duration      from dispatch to the end of output
 */
public record ExecResult(int exitCode, CapturedOutput stdout, CapturedOutput stderr,
                         boolean timedOut, boolean cancelled, Duration duration) implements AutoCloseable {

    public static final int EXIT_TIMEOUT = 124;
    public static final int EXIT_CANNOT_ENTER_CWD = 126;
    public static final int EXIT_CANCELLED = 130;

    /** Bytes of stdout beyond the capture cap. */
    public long stdoutDropped() {
        return stdout.dropped();
    }

    /** Bytes of stderr beyond the capture cap. */
    public long stderrDropped() {
        return stderr.dropped();
    }

    /** Deletes the spill files of output over ~1 MiB now, instead of when this result is garbage collected. */
    @Override
    public void close() {
        stdout.close();
        stderr.close();
    }

    public boolean succeeded() {
        return exitCode == 0 && !timedOut && !cancelled;
    }
}
