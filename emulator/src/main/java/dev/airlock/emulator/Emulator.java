package dev.airlock.emulator;

import java.net.URI;

/** A running emulator. Closing it stops every sandbox it made (no process left) and the server. */
public interface Emulator extends AutoCloseable {
    /** The base URL a client is configured with ({@code http://127.0.0.1:PORT}). */
    URI url();

    @Override
    void close();
}
