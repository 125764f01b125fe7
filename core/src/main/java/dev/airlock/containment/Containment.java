package dev.airlock.containment;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What an environment does to contain its children, decided once at open from the settings and
 * the target probe: which HOME, TMPDIR and PATH they get, which variables they lose, and (in the
 * eval profile) where the run's files and shims live.
 *
 * @param profile     the preset in force
 * @param homeMode    the configured home mode
 * @param realHome    the target's real home ({@code $HOME} of its login environment, else passwd)
 * @param airlockHome {@code $AIRLOCK_HOME} for children
 * @param home        the children's HOME
 * @param homeReason  why that HOME, for {@code doctor}
 * @param runDir      the eval profile's run dir
 * @param tmpDir      the children's TMPDIR when it is not the per-environment scratch dir
 * @param shimDir     the dir put first on PATH, holding the shims
 * @param basePath    the target's PATH before Airlock prefixed it
 * @param unset       variables removed from children (besides the secrets)
 */
public record Containment(Profile profile, HomeMode homeMode, String realHome, String airlockHome, String home,
                          String homeReason, Optional<String> runDir, Optional<String> tmpDir, Optional<String> shimDir,
                          String basePath, Set<String> unset) {

    public Containment {
        unset = Set.copyOf(unset);
    }

    /**
     * The plan for one target.
     *
     * @param facts     the probe's facts ({@code airlock_home}: the target's own {@code $AIRLOCK_HOME}; {@code path})
     * @param container the container verdict
     * @param signal    what decided the verdict
     */
    public static Containment plan(ContainmentSettings s, String realHome, Map<String, String> facts, boolean container,
                                   String signal) {
        String path = facts.getOrDefault("path", "");
        if (path.isEmpty()) {
            path = "/usr/local/bin:/usr/bin:/bin";
        }
        if (s.eval()) {
            String dir = s.runDir().orElseThrow();
            return new Containment(Profile.EVAL, s.homeMode(), realHome, dir + "/airlock", dir + "/home",
                    Profile.KEY + "=eval pins HOME to the run dir", s.runDir(), Optional.of(dir + "/tmp"),
                    Optional.of(dir + "/bin"), path, s.unset());
        }
        String targetHome = facts.getOrDefault("airlock_home", "");
        String airlockHome = s.airlockHome().orElse(targetHome.isEmpty() ? join(realHome, ".airlock") : targetHome);
        boolean profile = s.homeMode() == HomeMode.PROFILE || (s.homeMode() == HomeMode.AUTO && container);
        String reason = switch (s.homeMode()) {
            case PROFILE -> HomeMode.KEY + "=profile";
            case REAL -> HomeMode.KEY + "=real";
            case AUTO -> HomeMode.KEY + "=auto and " + (container ? "a container (" + signal + ")" : "a host (" + signal + ")");
        };
        return new Containment(Profile.NONE, s.homeMode(), realHome, airlockHome,
                profile ? airlockHome + "/home" : realHome, reason, Optional.empty(), Optional.empty(), Optional.empty(),
                path, s.unset());
    }

    /** Whether children get a home other than the real one. */
    public boolean profileHome() {
        return !home.equals(realHome);
    }

    /**
     * The variables a child gets on top of what it inherits. The caller's own values win, except
     * that the shims stay first on a PATH the caller sets.
     *
     * @param scratchDir the environment's private scratch dir, the default TMPDIR
     * @param requested  the variables of the exec request
     */
    public Map<String, String> childVariables(String scratchDir, Map<String, String> requested) {
        Map<String, String> set = new LinkedHashMap<>();
        set.put("AIRLOCK_REAL_HOME", realHome);
        set.put("AIRLOCK_HOME", airlockHome);
        set.put("HOME", home);
        String tmp = tmpDir.orElse(scratchDir);
        set.put("TMPDIR", tmp);
        set.put("TMP", tmp);
        set.put("TEMP", tmp);
        shimDir.ifPresent(bin -> set.put("PATH", bin + ":" + basePath));
        set.putAll(requested);
        shimDir.ifPresent(bin -> {
            String p = requested.get("PATH");
            if (p != null && !p.equals(bin) && !p.startsWith(bin + ":")) {
                set.put("PATH", bin + ":" + p);
            }
        });
        return set;
    }

    private static String join(String dir, String name) {
        return dir.endsWith("/") ? dir + name : dir + "/" + name;
    }
}
