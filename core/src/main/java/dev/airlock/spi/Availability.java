package dev.airlock.spi;

/**
 * Whether a provider can open environments here, and if not, why (in one line that says what to
 * install or set).
 */
public record Availability(boolean available, String reason) {

    public static Availability ok(String detail) {
        return new Availability(true, detail);
    }

    public static Availability unavailable(String reason) {
        return new Availability(false, reason);
    }
}
