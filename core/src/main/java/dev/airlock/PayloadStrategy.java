package dev.airlock;

/** How a {@link StdinMode#PAYLOAD} backend's SDK takes a command's stdin, declared in {@link Capabilities}. */
public enum PayloadStrategy {
    /**
     * Uploaded to a 0600 path in the private dir before the command runs, which opens and removes
     * it before it starts. Needs the whole stdin first: a stream of unknown length is capped by
     * {@code airlock.stdin.max-staged-bytes}.
     */
    STAGED,
    /**
     * Written by the backend's {@link dev.airlock.spi.StdinWriter} in chunks by offset with an
     * explicit end, while the command runs. No staging, no size cap.
     */
    STREAMED
}
