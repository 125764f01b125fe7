package dev.airlock.tck;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The one rule for tests that need something this machine may lack (bubblewrap, sshd, a Docker
 * daemon, Debian's crontab, python3...): skip with the reason, or, under
 * {@code AIRLOCK_REQUIRE_SERVICES=1} (as CI sets it), fail with the same reason. Each skip is also
 * printed, and {@link SkipReport} collects the reasons for the build's console.
 */
public final class Services {
    /** The variable CI sets so that a missing service fails the build instead of skipping. */
    public static final String REQUIRE_VARIABLE = "AIRLOCK_REQUIRE_SERVICES";

    private Services() {
    }

    /** Whether missing services fail instead of skipping ({@code AIRLOCK_REQUIRE_SERVICES=1}). */
    public static boolean required() {
        return "1".equals(System.getenv(REQUIRE_VARIABLE));
    }

    /**
     * Carries on when {@code present}; otherwise skips the current test or group with {@code reason},
     * or fails with it when services are required. Say what is missing and how to get it, e.g.
     * {@code "bubblewrap is not installed (apt-get install bubblewrap)"}.
     */
    public static void require(boolean present, String reason) {
        require(present, reason, required());
    }

    static void require(boolean present, String reason, boolean required) {
        if (present) {
            return;
        }
        if (required) {
            Assertions.fail(reason + " (" + REQUIRE_VARIABLE + "=1 makes a missing service a failure)");
        }
        System.out.println("[airlock] skipped: " + reason);
        Assumptions.abort(reason);
    }

    /**
     * The executable {@code name} on {@code PATH}, then in the system directories (the sbin ones
     * included, where Debian puts daemons such as sshd), or empty: {@link dev.airlock.spi.HostPrograms#find}.
     */
    public static Optional<Path> find(String name) {
        return dev.airlock.spi.HostPrograms.find(name);
    }

    /** {@link #find} or {@link #require}: the program, or a skip (a failure in CI) naming the package. */
    public static Path requireProgram(String name, String debianPackage) {
        Optional<Path> p = find(name);
        require(p.isPresent(), name + " is not installed (apt-get install " + debianPackage + ")");
        return p.orElseThrow();
    }
}
