package dev.airlock.spi;

/**
 * How a {@link RemoteProcess} ended: it exited with a status, a signal ended it, or the transport
 * died before the outcome arrived (lost: whether and how the command ended is unknown).
 */
public sealed interface ProcessEnd {

    /** The status a shell would report: N, 128+N for signal N; lost has none. */
    int exitCode();

    static ProcessEnd exited(int status) {
        return new Exited(status);
    }

    static ProcessEnd signalled(int signal) {
        return new Signalled(signal);
    }

    static ProcessEnd lost() {
        return Lost.INSTANCE;
    }

    record Exited(int status) implements ProcessEnd {
        @Override
        public int exitCode() {
            return status;
        }
    }

    record Signalled(int signal) implements ProcessEnd {
        @Override
        public int exitCode() {
            return 128 + signal;
        }
    }

    /** The transport died; nothing is known about the command's end. */
    enum Lost implements ProcessEnd {
        INSTANCE;

        @Override
        public int exitCode() {
            throw new IllegalStateException("a lost process has no exit status");
        }
    }
}
