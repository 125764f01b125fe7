package dev.airlock.containment;

import dev.airlock.ConfigurationException;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Decides whether a target is a container from the probe's signals, unless
 * {@code airlock.container=yes|no} says so. The decision names the signal, for {@code doctor}.
 */
public final class ContainerDetection {
    public static final String KEY = "airlock.container";
    private static final Pattern RUNTIME = Pattern.compile("docker|podman|lxc|kubepods|containerd|crio|libpod");

    private ContainerDetection() {
    }

    /** The verdict and the signal that decided it. */
    public record Verdict(boolean container, String signal) {
    }

    /**
     * @param setting the value of {@code airlock.container} (auto, yes, no)
     * @param probe   the probe's facts: {@code dockerenv}, {@code containerenv}, {@code k8s}, {@code cgroup1}, {@code rootmount}
     */
    public static Verdict decide(String setting, Map<String, String> probe) {
        String s = setting.trim().toLowerCase(Locale.ROOT);
        switch (s) {
            case "yes", "true" -> {
                return new Verdict(true, KEY + "=yes");
            }
            case "no", "false" -> {
                return new Verdict(false, KEY + "=no");
            }
            case "auto" -> {
                return fromProbe(probe).map(sig -> new Verdict(true, sig)).orElse(new Verdict(false, "no container signal"));
            }
            default -> throw new ConfigurationException("unknown " + KEY + " '" + setting + "': valid values are auto, yes, no");
        }
    }

    /** Fails with the list of valid values when {@code setting} is not one of them. */
    public static void validate(String setting) {
        decide(setting, Map.of());
    }

    private static Optional<String> fromProbe(Map<String, String> p) {
        if ("1".equals(p.get("dockerenv"))) {
            return Optional.of("/.dockerenv exists");
        }
        if ("1".equals(p.get("containerenv"))) {
            return Optional.of("/run/.containerenv exists");
        }
        if ("1".equals(p.get("k8s"))) {
            return Optional.of("KUBERNETES_SERVICE_HOST is set");
        }
        String cg = p.getOrDefault("cgroup1", "");
        var m = RUNTIME.matcher(cg);
        if (m.find()) {
            return Optional.of("/proc/1/cgroup mentions " + m.group());
        }
        String root = p.getOrDefault("rootmount", "");
        m = RUNTIME.matcher(root);
        if (m.find()) {
            return Optional.of("the root mount in /proc/self/mountinfo mentions " + m.group());
        }
        return Optional.empty();
    }
}
