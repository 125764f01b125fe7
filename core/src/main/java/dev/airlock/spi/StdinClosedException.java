package dev.airlock.spi;

import java.io.IOException;

/**
 * Thrown by a {@link StdinWriter} when the command no longer reads its stdin: it closed it, or it
 * exited. Like a pipe's EPIPE, this is no failure of the transport: the core stops writing and the
 * command runs on to its own end (a plain {@link IOException} means the input could not be
 * delivered whole, and the core then kills the command rather than let it take a short input).
 */
public class StdinClosedException extends IOException {
    public StdinClosedException(String message) {
        super(message);
    }
}
