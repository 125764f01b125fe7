package dev.airlock.spi;

import dev.airlock.AirlockException;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A command a backend has started: its three streams and its end. The core writes stdin (and
 * always closes it), drains stdout and stderr concurrently, and waits.
 */
public interface RemoteProcess {

    /** What {@link #waitFor} returns when the transport died before the command's status arrived; never a real status. */
    int NO_STATUS = Integer.MIN_VALUE;

    /** The command's stdin; the core closes it after the last byte (end-of-input). */
    OutputStream stdin();

    InputStream stdout();

    InputStream stderr();

    /** Waits for the end: the exit status, 128+N when signal N ended it, or {@link #NO_STATUS} when the connection was lost. */
    int waitFor() throws InterruptedException;

    /**
     * How the command ended, as a value. The default maps {@link #waitFor}: {@link #NO_STATUS} is
     * lost, anything else exited with that status (128+N included).
     */
    default ProcessEnd awaitEnd() throws InterruptedException {
        int status = waitFor();
        return status == NO_STATUS ? ProcessEnd.lost() : ProcessEnd.exited(status);
    }

    /**
     * Why the end was lost, when the backend knows it was not the connection: the sandbox ended
     * (its lifetime ran out, or it was stopped elsewhere), and every process in it with it. The
     * core then fails the exec, or the internal script, with this error (one line saying what to
     * do) instead of "the connection was lost", and does not try to kill the command's tree over
     * a fresh connection, as it does for a lost connection. Say so only when the sandbox is known
     * to be gone. Asked only after {@link #waitFor} answered {@link #NO_STATUS}; empty by default.
     */
    default Optional<AirlockException> lostReason() {
        return Optional.empty();
    }

    /**
     * The start time of the process group's leader (clock ticks since boot, field 22 of
     * {@code /proc/PID/stat}) when the backend knows it; the core otherwise takes it from the
     * launcher record. Checked before every signal, so a recycled group id is never hit.
     */
    default OptionalLong startTime() {
        return OptionalLong.empty();
    }

    /**
     * The process group the command leads, for the core's default kill
     * ({@code kill -TERM -- -PGID}); empty when the backend kills natively.
     */
    OptionalLong processGroup();

    /**
     * Whether processes the command started still run after it ended (a background job), asked
     * once its output ended: then the core kills its tree before the result, as it does when a job
     * still holds the output. The default cannot tell and says no (see also
     * {@link Backend#outputEndsAtExit}).
     *
     * @param group the process group the launcher record named (the command's, read before the
     *              command ran), empty when no record came and so the command never ran. Ask about
     *              this group, never one the sandbox wrote down later: the command may have rewritten
     *              anything it can write, and a forged answer would leave its jobs running.
     */
    default boolean hasSurvivors(OptionalLong group) {
        return false;
    }

    /** Frees the transport's resources once the command ended and output is drained. */
    default void release() {
    }
}
