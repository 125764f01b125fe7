package dev.airlock.emulator;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.util.Optional;

/** The same rule as the other modules: a missing service skips with its reason, or fails under AIRLOCK_REQUIRE_SERVICES=1. */
final class Services {
    private Services() {
    }

    static SandboxIsolation bwrap() {
        SandboxIsolation iso = SandboxIsolation.detect(Settings.empty());
        if (iso.kind() != SandboxIsolation.Kind.BWRAP) {
            skip("bubblewrap unavailable: " + iso.describe());
        }
        return iso;
    }

    /** The util-linux isolation, which a machine without bubblewrap uses. */
    static SandboxIsolation unshare() {
        try {
            return SandboxIsolation.unshare();
        } catch (ConfigurationException e) {
            skip("unshare unavailable: " + e.getMessage());
            throw e;
        }
    }

    /** gVisor: skipped (or failed, under AIRLOCK_REQUIRE_SERVICES=1) with the reason where runsc is missing or cannot run here. */
    static SandboxIsolation gvisor() {
        try {
            return SandboxIsolation.gvisor(Optional.empty());
        } catch (ConfigurationException e) {
            skip("gVisor unavailable: " + e.getMessage());
            throw e;
        }
    }

    /** Whichever isolation this machine gives (what the emulators use). */
    static SandboxIsolation any() {
        SandboxIsolation iso = SandboxIsolation.detect(Settings.empty());
        if (!iso.runsCommands()) {
            skip("no sandbox isolation: " + iso.describe());
        }
        return iso;
    }

    private static void skip(String reason) {
        if ("1".equals(System.getenv("AIRLOCK_REQUIRE_SERVICES"))) {
            Assertions.fail(reason + " (AIRLOCK_REQUIRE_SERVICES=1)");
        }
        System.out.println("SKIP: " + reason);
        Assumptions.abort(reason);
    }
}
