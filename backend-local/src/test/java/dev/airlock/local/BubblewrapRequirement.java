package dev.airlock.local;

import dev.airlock.tck.Services;

/** For tests that need bubblewrap: skipped with the reason where it cannot run, failed where services are required. */
public final class BubblewrapRequirement {
    private BubblewrapRequirement() {
    }

    /** Bubblewrap is on PATH and makes a sandbox on this machine. */
    public static void require() {
        Services.require(dev.airlock.spi.HostPrograms.onPath("bwrap").isPresent()
                        && Bubblewrap.unusable(dev.airlock.spi.HostPrograms.onPath("bwrap").get()).isEmpty(),
                "bubblewrap is not installed or cannot make a sandbox here (apt-get install bubblewrap)");
    }
}
