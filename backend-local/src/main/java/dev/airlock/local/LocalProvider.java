package dev.airlock.local;

import dev.airlock.Environment;
import dev.airlock.settings.SettingKey;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.OpenContext;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The {@code local} backend: commands run as processes on this host. The embedded default. */
public final class LocalProvider implements EnvironmentProvider {

    @Override
    public String name() {
        return "local";
    }

    @Override
    public List<SettingKey> settingKeys() {
        return List.of(
                SettingKey.of(LocalSettings.ISOLATION, "none | bwrap", "bwrap where it runs here, else none with a warning",
                        "bwrap: every command under bubblewrap; none: commands as this JVM's children, not enforced"),
                SettingKey.of(LocalSettings.NETWORK, "on | off", "on; off in the eval profile", "off cuts the network under bwrap; an older alias of airlock.network, which wins when set (the two may only agree)"),
                SettingKey.of(LocalSettings.WORKDIR, "path | none", "the JVM's working directory",
                        "the agent's project: where commands start, writable under bwrap"),
                SettingKey.of(LocalSettings.WRITABLE + SettingKey.NAME, "path", "", "more writable binds under bwrap"),
                SettingKey.of(LocalSettings.READABLE + SettingKey.NAME, "path", "",
                        "more read-only binds under bwrap (the real home is hidden; its credentials stay hidden)"),
                SettingKey.of(LocalSettings.BWRAP, "path", "bwrap on PATH", "the bubblewrap binary"),
                SettingKey.of(LocalSettings.STDIN_MODE, "pipe | payload", "pipe", "payload stages stdin as a 0600 file"),
                SettingKey.of(LocalSettings.ENV_MODE, "native | staged", "native", "staged sends variables in a 0600 env script"));
    }

    @Override
    public Availability check(Settings settings) {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return Availability.unavailable("the local backend needs Linux (/proc and setsid); this is "
                    + System.getProperty("os.name") + ": use the docker or ssh backend");
        }
        if (!Files.isDirectory(Path.of("/proc/self"))) {
            return Availability.unavailable("/proc is not mounted; the local backend needs it");
        }
        if (dev.airlock.spi.HostPrograms.onPath("setsid").isEmpty()) {
            return Availability.unavailable("setsid is not on PATH; install Debian's util-linux");
        }
        LocalSettings local = LocalSettings.from(settings);
        if (local.isolation().orElse(LocalSettings.Isolation.NONE) == LocalSettings.Isolation.BWRAP
                && Bubblewrap.find(local).isEmpty()) {
            return Availability.unavailable(LocalSettings.ISOLATION + "=bwrap needs bubblewrap, which is not "
                    + local.bwrap().map(b -> "at " + b).orElse("on PATH") + "; " + Bubblewrap.PACKAGE_HINT);
        }
        return Availability.ok("processes on this host");
    }

    @Override
    public Environment open(OpenContext context) {
        Availability a = check(context.settings());
        if (!a.available()) {
            throw new dev.airlock.BackendUnavailableException("local backend: " + a.reason());
        }
        return LocalBackend.open(context);
    }
}
