package dev.airlock.remote;

import java.util.Map;

/**
 * gRPC status codes by name, mapped to the HTTP status that means the same thing, so one table
 * ({@link ErrorMapping}) and one retry rule serve both protocols. The pairs follow the gRPC
 * spec's own HTTP mapping (UNAVAILABLE = 503, RESOURCE_EXHAUSTED = 429, NOT_FOUND = 404...).
 * Names rather than {@code io.grpc.Status.Code} keep grpc-java out of this module: the REST
 * backends (Daytona, Vercel) would otherwise carry netty and protobuf for nothing.
 */
final class GrpcCodes {
    private static final Map<String, Integer> HTTP = Map.ofEntries(
            Map.entry("CANCELLED", 499),
            Map.entry("UNKNOWN", 500),
            Map.entry("INVALID_ARGUMENT", 400),
            Map.entry("DEADLINE_EXCEEDED", 504),
            Map.entry("NOT_FOUND", 404),
            Map.entry("ALREADY_EXISTS", 409),
            Map.entry("PERMISSION_DENIED", 403),
            Map.entry("RESOURCE_EXHAUSTED", 429),
            Map.entry("FAILED_PRECONDITION", 412),
            Map.entry("ABORTED", 409),
            Map.entry("OUT_OF_RANGE", 416),
            Map.entry("UNIMPLEMENTED", 501),
            Map.entry("INTERNAL", 500),
            Map.entry("UNAVAILABLE", 503),
            Map.entry("DATA_LOSS", 500),
            Map.entry("UNAUTHENTICATED", 401));

    private GrpcCodes() {
    }

    static int httpEquivalent(String codeName) {
        Integer h = HTTP.get(codeName);
        if (h == null) {
            throw new IllegalArgumentException("not a gRPC status code name: " + codeName);
        }
        return h;
    }
}
