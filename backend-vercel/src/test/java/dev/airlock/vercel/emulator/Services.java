package dev.airlock.vercel.emulator;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/** A missing service skips with its reason, or fails under AIRLOCK_REQUIRE_SERVICES=1 (as in CI). */
final class Services {
    private Services() {
    }

    static void require(boolean present, String reason) {
        if (present) {
            return;
        }
        if ("1".equals(System.getenv("AIRLOCK_REQUIRE_SERVICES"))) {
            Assertions.fail(reason + " (AIRLOCK_REQUIRE_SERVICES=1)");
        }
        System.out.println("SKIP: " + reason);
        Assumptions.abort(reason);
    }
}
