package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.NetworkMode;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.Set;

/**
 * The kit's Ports and NetworkPolicy groups under bubblewrap with {@code airlock.network=off}: the
 * environment's own network (one per environment, only a loopback) must serve its ports through
 * {@code expose} and still reach nothing outside. The kit opens its Ports cases with the network
 * {@code on}; here every environment asked for {@code on} opens {@code off} instead (any other mode
 * is passed as asked, so an undeclared one is still refused). The other groups do not depend on the
 * network and are {@link LocalIsolatedCompatibilityTest}'s.
 */
@ExtendWith(LocalOfflineCompatibilityTest.NetworkGroupsOnly.class)
class LocalOfflineCompatibilityTest extends EnvironmentCompatibilityKit {
    /** The kit's groups this class runs. */
    private static final Set<String> GROUPS = Set.of("Ports", "NetworkPolicy");

    @BeforeAll
    static void needsBubblewrap() {
        Services.require(dev.airlock.spi.HostPrograms.onPath("bwrap").isPresent(), "bubblewrap is not installed (apt-get install bubblewrap)");
    }

    @Override
    protected Settings settings() {
        // workdir none: this module's directory holds the tests' stand-in real home, which bwrap keeps read-only
        return Settings.of("airlock.container", "no", "airlock.local.isolation", "bwrap", "airlock.local.workdir", "none",
                NetworkMode.KEY, NetworkMode.OFF.label());
    }

    @Override
    protected Environment openEnvironment(OpenContext context) {
        Settings s = context.settings();
        if (s.get(NetworkMode.KEY).filter(NetworkMode.ON.label()::equals).isPresent()) {
            context = context.withSettings(s.with(NetworkMode.KEY, NetworkMode.OFF.label()));
        }
        return new LocalProvider().open(context);
    }

    /** Skips every group of the kit but {@link #GROUPS}, saying where they run. */
    static final class NetworkGroupsOnly implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            Class<?> c = context.getTestClass().orElse(null);
            while (c != null && c.getEnclosingClass() != null && c.getEnclosingClass() != EnvironmentCompatibilityKit.class) {
                c = c.getEnclosingClass();
            }
            if (c == null || c.getEnclosingClass() == null || GROUPS.contains(c.getSimpleName())) {
                return ConditionEvaluationResult.enabled("a group the network changes");
            }
            return ConditionEvaluationResult.disabled("run with the network on by LocalIsolatedCompatibilityTest;"
                    + " this class runs only " + GROUPS);
        }
    }
}
