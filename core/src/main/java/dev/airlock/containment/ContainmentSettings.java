package dev.airlock.containment;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;

import java.util.Optional;
import java.util.Set;

/**
 * The containment settings, read and checked once when an environment is created, so a typo fails
 * before anything runs on the target.
 *
 * <table>
 *   <caption>containment settings</caption>
 *   <tr><th>key</th><th>values</th><th>default</th></tr>
 *   <tr><td>airlock.home ({@code AIRLOCK_HOME})</td><td>absolute path on the target</td><td>{@code ~/.airlock} of the real home</td></tr>
 *   <tr><td>airlock.home-mode ({@code AIRLOCK_HOME_MODE})</td><td>auto, real, profile and their aliases</td><td>auto</td></tr>
 *   <tr><td>airlock.container</td><td>auto, yes, no</td><td>auto</td></tr>
 *   <tr><td>airlock.profile</td><td>none, eval</td><td>none</td></tr>
 *   <tr><td>airlock.run-dir</td><td>absolute path on the target; required by the eval profile</td><td></td></tr>
 * </table>
 *
 * @param homeMode    the parsed home mode
 * @param profile     the preset
 * @param runDir      the eval profile's run dir (present exactly when the profile is eval)
 * @param airlockHome an {@code airlock.home} set by the caller (config file, system property or
 *                    explicit value); one from the process environment is the target's own
 *                    {@code $AIRLOCK_HOME}, which the probe reads there
 * @param container   the {@code airlock.container} value
 */
public record ContainmentSettings(HomeMode homeMode, Profile profile, Optional<String> runDir,
                                  Optional<String> airlockHome, String container) {
    public static final String HOME_KEY = "airlock.home";
    public static final String RUN_DIR_KEY = "airlock.run-dir";

    /** Variables the eval profile removes from every child: the user bus and its runtime dir. */
    public static final Set<String> EVAL_UNSET = Set.of("DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR");

    public static ContainmentSettings from(Settings s) {
        String rawMode = s.get(HomeMode.KEY, "auto");
        HomeMode mode = HomeMode.parse(rawMode);
        Profile profile = Profile.parse(s.get(Profile.KEY, "none"));
        String container = s.get(ContainerDetection.KEY, "auto");
        ContainerDetection.validate(container);
        // An AIRLOCK_HOME in the JVM's environment describes this host; the target's own comes from the probe.
        Optional<String> home = s.get(HOME_KEY).filter(v -> !"environment".equals(s.origin(HOME_KEY).orElse("")))
                .map(String::trim).filter(v -> !v.isEmpty()).map(v -> absolute(HOME_KEY, v));
        Optional<String> runDir = Optional.empty();
        if (profile == Profile.EVAL) {
            String dir = s.get(RUN_DIR_KEY).map(String::trim).filter(v -> !v.isEmpty()).orElseThrow(() ->
                    new ConfigurationException(Profile.KEY + "=eval needs " + RUN_DIR_KEY
                            + "=DIR, an absolute path on the target for the run's home, temp dir, shims and their state"));
            runDir = Optional.of(absolute(RUN_DIR_KEY, dir));
            // The run dir is the command's to write: the operator's config and approvals cannot live there.
            OwnState.refuseInside(s, java.util.Map.of(java.nio.file.Path.of(runDir.get()), "the eval run dir " + runDir.get()));
            if (mode == HomeMode.REAL) {
                throw new ConfigurationException(Profile.KEY + "=eval pins HOME to " + runDir.get() + "/home, but "
                        + HomeMode.KEY + " is '" + rawMode + "'; remove " + HomeMode.KEY + " or drop the eval profile");
            }
        }
        return new ContainmentSettings(mode, profile, runDir, home, container);
    }

    public boolean eval() {
        return profile == Profile.EVAL;
    }

    /** Where the environment's private dir must be made instead of the backend's default, if anywhere. */
    public Optional<String> privateDirBase() {
        return runDir.map(d -> d + "/tmp");
    }

    /** Variables removed from what children inherit, on top of the secrets. */
    public Set<String> unset() {
        return eval() ? EVAL_UNSET : Set.of();
    }

    private static String absolute(String key, String path) {
        if (!path.startsWith("/") || path.indexOf('\0') >= 0 || path.indexOf('\n') >= 0) {
            throw new ConfigurationException("setting " + key + " must be an absolute path on the target without"
                    + " newlines, got '" + path + "'");
        }
        String p = path;
        while (p.length() > 1 && p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p;
    }
}
