package dev.airlock.spi;

import java.io.IOException;

/**
 * A PAYLOAD backend's streamed stdin ({@link dev.airlock.PayloadStrategy#STREAMED}): the core reads
 * the caller's stdin and hands it over in chunks by offset while the command runs, then ends it.
 * The backend sends each chunk with its offset (so a resent chunk can be acknowledged and a gap
 * refused by the far side) and must not buffer the whole input.
 */
public interface StdinWriter {

    /** The chunk size the core hands over (the last chunk may be shorter). */
    int CHUNK = 1 << 20;

    /** Delivers {@code length} bytes of {@code data} at {@code offset} of the command's stdin. */
    void write(RemoteProcess process, long offset, byte[] data, int length, Deadline deadline) throws IOException;

    /** Explicit end-of-input after {@code length} bytes in all. Called once, also for an empty stdin. */
    void end(RemoteProcess process, long length, Deadline deadline) throws IOException;
}
