package dev.airlock;

/** How a backend brings a command's stdout and stderr back, declared in {@link Capabilities}. */
public enum OutputTransport {
    /** Both stream back byte-exact while the command runs (local, docker, ssh, Modal). */
    STREAM,
    /**
     * The backend's logs are text (Daytona, Vercel): the core runs the command with
     * {@code >P.out 2>P.err} in the private dir, downloads both under the capture cap through the
     * backend's native files once it ended, and deletes them, also after a timeout or cancel. The
     * live logs are progress only. Needs the backend's native files.
     */
    FILES
}
