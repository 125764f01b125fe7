package dev.airlock.spi;

import java.io.IOException;
import java.net.URI;

/**
 * A backend's means to reach a port of its sandbox from this machine ({@link Backend#portForwarder()}),
 * for a backend that declares {@link dev.airlock.PortSupport#ANY} or {@link dev.airlock.PortSupport#DECLARED}.
 * The core checks the port (1-65535, declared where it must be), remembers what is open, and closes
 * every port before the sandbox stops; the forwarder only makes and ends the way through.
 */
public interface PortForwarder {

    /**
     * A URI on this machine ({@code http://127.0.0.1:NNNNN/}) where {@code port} of the sandbox
     * answers. Throw a {@link dev.airlock.ConfigurationException} (one line, what to do) for a port
     * this sandbox cannot expose, an {@link IOException} when the transport failed.
     */
    URI open(int port, Deadline deadline) throws IOException;

    /** Ends what {@link #open} made for {@code port}; nothing by default (a port that needs no forward). */
    default void close(int port, URI uri) {
    }
}
