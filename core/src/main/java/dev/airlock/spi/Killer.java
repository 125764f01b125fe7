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

    /** Whether the group has members now, and its leader's start time (clock ticks since boot) when known. */
    GroupState groupState(long pgid, Deadline deadline) throws IOException;
}
