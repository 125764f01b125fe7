package dev.airlock;

/** How a backend delivers a command's stdin. */
public enum StdinMode {
    /** Stdin streams into the process with end-of-input (local, ssh). Byte-exact. */
    PIPE,
    /**
     * The backend stages stdin at a private 0600 path on the target and the command reads it
     * through the core's three-line redirect prefix. Byte-exact; needs the whole stdin first.
     */
    PAYLOAD,
    /** Stdin embedded in the command as a heredoc: plugins only, not byte-exact (no NUL, size-limited). */
    HEREDOC;

    public boolean isByteExact() {
        return this != HEREDOC;
    }
}
