package dev.airlock.emulator;

import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/** The same rule as the other modules: a missing service skips with its reason, or fails under AIRLOCK_REQUIRE_SERVICES=1. */
final class Services {
    private Services() {
    }

    static SandboxIsolation bwrap() {
        SandboxIsolation iso = SandboxIsolation.detect(Settings.empty());
        if (iso.bwrap().isEmpty()) {
            String reason = "bubblewrap unavailable: " + iso.describe();
            if ("1".equals(System.getenv("AIRLOCK_REQUIRE_SERVICES"))) {
                Assertions.fail(reason + " (AIRLOCK_REQUIRE_SERVICES=1)");
            }
            System.out.println("SKIP: " + reason);
            Assumptions.abort(reason);
        }
        return iso;
    }
}
