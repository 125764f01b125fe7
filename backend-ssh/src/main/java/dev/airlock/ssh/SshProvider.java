package dev.airlock.ssh;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.OpenContext;

/** The {@code ssh} backend: commands on a remote host over SSH (JSch). */
public final class SshProvider implements EnvironmentProvider {

    @Override
    public String name() {
        return "ssh";
    }

    /** Cheap: validates the settings, connects to nothing. */
    /** The key passphrase's variable ({@code airlock.ssh.passphrase}); no command needs it. */
    @Override
    public java.util.Set<String> secretVariables() {
        return java.util.Set.of(Settings.envName(SshSettings.PASSPHRASE));
    }

    @Override
    public Availability check(Settings settings) {
        if (settings.get(SshSettings.HOST).filter(h -> !h.isBlank()).isEmpty()) {
            return Availability.unavailable("set " + SshSettings.HOST + " (and " + SshSettings.USER
                    + ", " + SshSettings.IDENTITY + ") to use the ssh backend");
        }
        try {
            SshSettings s = SshSettings.from(settings);
            return Availability.ok("ssh to " + s.display());
        } catch (ConfigurationException e) {
            return Availability.unavailable(e.getMessage());
        }
    }

    @Override
    public Environment open(OpenContext context) {
        return SshEnvironment.open(context);
    }
}
