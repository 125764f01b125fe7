package dev.airlock.emulator;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One fault an emulator injects into a named call. The same fault reads right on both wires: an
 * HTTP emulator answers {@link Status#httpStatus()}, a gRPC one {@link Status#grpcCode()}.
 */
public sealed interface Fault {

    /** Answer an error status without doing the work (429 with Retry-After, 5xx, UNAVAILABLE). */
    record Status(int httpStatus, String grpcCode, Optional<Duration> retryAfter) implements Fault {
        public Status {
            Objects.requireNonNull(grpcCode, "grpcCode");
            Objects.requireNonNull(retryAfter, "retryAfter");
        }
    }

    /** Wait, then do the work and answer normally. */
    record Delay(Duration delay) implements Fault {
        public Delay {
            Objects.requireNonNull(delay, "delay");
        }
    }

    /** Do the work, send the first {@code bytes} bytes of the answer, then cut the connection. */
    record CutAfterBytes(long bytes) implements Fault {
    }

    /** Do the work, send the first {@code lines} lines of a streamed answer (NDJSON, logs), then cut. */
    record CutAfterLines(long lines) implements Fault {
    }

    /**
     * Do the work, stream the answer, and cut the connection at the first write once {@code after}
     * has passed since the answer began: a long stream cut by time, as an edge proxy does.
     */
    record CutAfterTime(Duration after) implements Fault {
        public CutAfterTime {
            Objects.requireNonNull(after, "after");
        }
    }

    /** Do the work, then drop the connection without answering: the client cannot know it ran. */
    record LoseResponse() implements Fault {
    }

    static Fault status(int http) {
        return new Status(http, grpcFor(http), Optional.empty());
    }

    static Fault rateLimited(Duration retryAfter) {
        return new Status(429, "RESOURCE_EXHAUSTED", Optional.of(retryAfter));
    }

    static Fault unavailable() {
        return new Status(503, "UNAVAILABLE", Optional.empty());
    }

    static Fault delay(Duration d) {
        return new Delay(d);
    }

    static Fault cutAfterBytes(long n) {
        return new CutAfterBytes(n);
    }

    static Fault cutAfterLines(long n) {
        return new CutAfterLines(n);
    }

    static Fault loseResponse() {
        return new LoseResponse();
    }

    /** The gRPC code that means an HTTP status (the gRPC spec's mapping). */
    static String grpcFor(int http) {
        return switch (http) {
            case 400 -> "INVALID_ARGUMENT";
            case 401 -> "UNAUTHENTICATED";
            case 403 -> "PERMISSION_DENIED";
            case 404 -> "NOT_FOUND";
            case 409 -> "ABORTED";
            case 429 -> "RESOURCE_EXHAUSTED";
            case 501 -> "UNIMPLEMENTED";
            case 502, 503 -> "UNAVAILABLE";
            case 504 -> "DEADLINE_EXCEEDED";
            default -> http >= 500 ? "INTERNAL" : "UNKNOWN";
        };
    }
}
