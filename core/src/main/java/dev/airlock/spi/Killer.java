package dev.airlock.spi;

import java.io.IOException;
import java.util.OptionalLong;

/**
 * A backend's own way to signal a command's process tree and to read a process group. Without one
 * the core runs {@code kill -TERM -- -PGID} and a {@code /proc} read as scripts through
 * {@link Backend#launch}. The core reads the group right before every signal and signals only when
 * its leader's start time still matches the launched one.
 */
public interface Killer {

    /**
     * SIGTERM ({@code force=false}) or SIGKILL to the command's whole tree. {@code group} is its
     * process group, already checked; empty when neither the backend nor the launcher record
     * knows it (then only a native per-exec kill can help).
     */
    void kill(RemoteProcess process, OptionalLong group, boolean force, Deadline deadline) throws IOException;

    /**
     * Whether {@link #kill} reaches the command with {@code group} empty (a per-exec kill of the
     * backend's own, such as a sandbox API's). Answer false when it needs the group (it signals the
     * group through the core's shell killer, say): then, when the launcher record did not come in
     * time, the core looks the group up by the exec's nonce on the target instead of calling a kill
     * that can reach nothing.
     */
    default boolean killsWithoutGroup() {
        return true;
    }

    /** Whether the group has members now, and its leader's start time (clock ticks since boot) when known. */
    GroupState groupState(long pgid, Deadline deadline) throws IOException;
}
