package dev.airlock.tck;

import dev.airlock.spi.Holder;

/**
 * A holder label ({@link Holder}) as a process that died would have left it: this JVM's boot and
 * pid with another start time, which is how a reused pid reads. For gc tests that need an orphan
 * made by "another" process without starting or killing one.
 */
public final class GoneHolder {
    private GoneHolder() {
    }

    public static String label() {
        String current = Holder.current().orElseThrow(() -> new IllegalStateException(
                "this machine has no boot id or process start time, so holders cannot be told apart"));
        int slash = current.lastIndexOf('/');
        String gone = current.substring(0, slash + 1) + (Long.parseLong(current.substring(slash + 1)) - 1);
        if (Holder.alive(gone)) {
            throw new IllegalStateException("a holder with another start time reads as alive: " + gone);
        }
        return gone;
    }
}
