package dev.airlock.session;

import java.util.Optional;

/**
 * Where a session's state lives between environments (the CLI's named sessions keep it under
 * the operator's {@code AIRLOCK_HOME}). The bytes are the snapshot script: they may hold values
 * the session exported itself, so a store keeps them private (mode 0600).
 */
public interface SessionStore {

    /**
     * The largest snapshot a session keeps, 16 MiB: the snapshot is a file on the target that the
     * session's own commands can write, so it is read under this cap (memory stays bounded) and a
     * larger one is refused with a one-line error, never loaded whole.
     */
    int MAX_SNAPSHOT_BYTES = 16 << 20;

    /** The state saved last time, or empty for a new session. */
    Optional<byte[]> load();

    /** Keeps {@code snapshot}, replacing what was there. */
    void save(byte[] snapshot);
}
