package dev.airlock.spi;

import dev.airlock.settings.Settings;

import java.time.Duration;
import java.util.List;

/**
 * Optional for an {@link EnvironmentProvider} whose environments can leave something behind when
 * the process that opened them dies before closing them: a sandbox, a container, or a private
 * dir and process tree on a host. The CLI's {@code gc} finds it with {@code provider instanceof
 * LeftoverCollector}. A backend with sandboxes that outlive a command on purpose implements
 * {@link SandboxLifecycle}, which extends this.
 */
public interface LeftoverCollector {

    /**
     * Removes what this backend labelled that was created more than {@code olderThan} ago and
     * whose owner is gone (left by processes that died before closing); what {@code up} made only
     * when {@code includeKept}. Never another owner's, never a live environment's. Returns the ids
     * (or paths) removed.
     */
    List<String> gc(Settings settings, Duration olderThan, boolean includeKept);
}
