package dev.airlock.remote;

import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A failed remote call as the wire saw it, before it becomes one of the core's exceptions. A
 * client's call throws it; {@link RemoteCalls} decides from it whether to retry and then maps it
 * through {@link ErrorMapping}. The message never holds a secret: the service's own text is
 * passed through {@link Redactor} before it is stored.
 */
public final class WireFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** How far the call got. */
    public enum Stage {
        /** The request never left (connect refused, DNS, TLS handshake): nothing ran. */
        NOT_SENT,
        /** The request may have arrived but no answer came back (reset, timeout, cut stream). */
        LOST,
        /** The service answered with an error status. */
        ANSWERED
    }

    private final Stage stage;
    private final int httpStatus;
    private final String grpcCode;
    private final String detail;
    private final transient Optional<Duration> retryAfter;

    private WireFailure(Stage stage, int httpStatus, String grpcCode, String detail, Optional<Duration> retryAfter,
                        Throwable cause) {
        super(describe(stage, httpStatus, grpcCode, detail), cause, false, cause != null);
        this.stage = stage;
        this.httpStatus = httpStatus;
        this.grpcCode = grpcCode;
        this.detail = detail;
        this.retryAfter = retryAfter;
    }

    /** An HTTP error status; {@code detail} is the service's message (already redacted or plain). */
    public static WireFailure http(int status, String detail, Optional<Duration> retryAfter) {
        return new WireFailure(Stage.ANSWERED, status, "", oneLine(detail), retryAfter, null);
    }

    /**
     * A gRPC status by its code name ({@code UNAVAILABLE}, {@code NOT_FOUND}...), as
     * {@code io.grpc.Status.Code#name()} gives it, so this module needs no gRPC dependency.
     */
    public static WireFailure grpc(String codeName, String detail, Optional<Duration> retryAfter) {
        String code = Objects.requireNonNull(codeName, "codeName");
        return new WireFailure(Stage.ANSWERED, GrpcCodes.httpEquivalent(code), code, oneLine(detail), retryAfter, null);
    }

    /** The request never reached the service. */
    public static WireFailure notSent(IOException cause) {
        return new WireFailure(Stage.NOT_SENT, 0, "", oneLine(String.valueOf(cause.getMessage())), Optional.empty(), cause);
    }

    /** The request may have reached the service; its answer was lost. */
    public static WireFailure lost(IOException cause) {
        return new WireFailure(Stage.LOST, 0, "", oneLine(String.valueOf(cause.getMessage())), Optional.empty(), cause);
    }

    /** A gRPC UNAVAILABLE that came from a failed connect (nothing sent), when the client can tell. */
    public static WireFailure grpcNotSent(String detail) {
        return new WireFailure(Stage.NOT_SENT, 503, "UNAVAILABLE", oneLine(detail), Optional.empty(), null);
    }

    public Stage stage() {
        return stage;
    }

    /** The HTTP status, or the HTTP equivalent of a gRPC code; 0 when nothing was answered. */
    public int httpStatus() {
        return httpStatus;
    }

    /** The gRPC code name, or empty for HTTP. */
    public String grpcCode() {
        return grpcCode;
    }

    public String detail() {
        return detail;
    }

    public Optional<Duration> retryAfter() {
        return retryAfter == null ? Optional.empty() : retryAfter;
    }

    /** Whether the service itself looks unhealthy (counts against the circuit breaker). */
    boolean serviceFailing() {
        return stage != Stage.ANSWERED || httpStatus >= 500;
    }

    private static String describe(Stage stage, int status, String grpc, String detail) {
        String what = switch (stage) {
            case NOT_SENT -> "not sent";
            case LOST -> "answer lost";
            case ANSWERED -> grpc.isEmpty() ? "HTTP " + status : grpc;
        };
        return detail.isEmpty() ? what : what + ": " + detail;
    }

    static String oneLine(String s) {
        if (s == null) {
            return "";
        }
        String t = s.strip().replaceAll("\\s*\\R\\s*", " ");
        return t.length() > 300 ? t.substring(0, 300) + "..." : t;
    }
}
