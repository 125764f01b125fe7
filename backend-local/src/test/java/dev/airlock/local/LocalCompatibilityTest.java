package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.EnvironmentCompatibilityKit;

/**
 * The local backend against the compatibility kit without a sandbox ({@code isolation=none},
 * where bwrap is missing or declined), stdin streamed through pipes (PIPE). The default,
 * bubblewrap, has its own kit run: {@link LocalIsolatedCompatibilityTest}.
 */
class LocalCompatibilityTest extends EnvironmentCompatibilityKit {

    @Override
    protected Settings settings() {
        // this VM has /.dockerenv; keep the real HOME
        return Settings.of("airlock.container", "no", "airlock.local.isolation", "none");
    }

    /** Commands are host processes. */
    @Override
    protected boolean sharesHostLoopback() {
        return true;
    }

    @Override
    protected Environment openEnvironment(OpenContext context) {
        return new LocalProvider().open(context);
    }
}
