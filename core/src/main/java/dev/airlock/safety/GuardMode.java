package dev.airlock.safety;

import dev.airlock.Capabilities;
import dev.airlock.settings.Settings;

/**
 * Whether the command guard is in force: {@code airlock.guard=auto|on|off}. Auto is on unless the
 * environment is disposable (a fresh container or cloud sandbox with no host mounts, not attached),
 * where the sandbox itself is the boundary. The write tiers of the file API apply either way.
 */
public final class GuardMode {
    public static final String KEY = "airlock.guard";

    /**
     * @param on      whether commands are checked
     * @param setting the configured value ({@code auto}, {@code on}, {@code off})
     * @param reason  why, for {@code doctor}
     */
    public record Verdict(boolean on, String setting, String reason) {
        /** One line for {@code doctor}: {@code on (auto: ...)}. */
        public String describe() {
            return (on ? "on" : "off") + " (" + setting + ": " + reason + ")";
        }
    }

    private GuardMode() {
    }

    public static Verdict decide(Settings settings, Capabilities capabilities) {
        String v = settings.getChoice(KEY, "auto", "auto", "on", "off");
        return switch (v) {
            case "on" -> new Verdict(true, v, "set by " + KEY);
            case "off" -> new Verdict(false, v, "set by " + KEY + "; file API writes still follow the tiers");
            default -> capabilities.disposable()
                    ? new Verdict(false, v, "a disposable sandbox with no host mounts; the sandbox is the boundary")
                    : new Verdict(true, v, "the environment is not a disposable sandbox");
        };
    }
}
