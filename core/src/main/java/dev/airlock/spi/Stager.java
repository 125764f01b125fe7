package dev.airlock.spi;

import dev.airlock.Payload;

import java.io.IOException;

/**
 * A backend's own way to put bytes on the target (an upload API), used for PAYLOAD stdin, the staged
 * env and scripts too long for argv. Without one the core streams the bytes through {@code cat} over
 * the backend's stdin pipe.
 */
public interface Stager {

    /** Puts {@code data} at {@code path} with mode 0600, replacing what is there. Streams; never holds it all. */
    void stage(String path, Payload data, Deadline deadline) throws IOException;

    /**
     * Removes a staged path; must not fail when it is already gone. A backend that cannot delete
     * overwrites it with an empty file.
     */
    void remove(String path, Deadline deadline) throws IOException;
}
