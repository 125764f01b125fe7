package dev.airlock.settings;

import java.nio.file.Path;
import java.util.Map;

/** Where Airlock keeps its own state on the JVM's host: {@code $AIRLOCK_HOME}, default {@code ~/.airlock}. */
public final class AirlockHome {
    private AirlockHome() {
    }

    public static Path resolve(Map<String, String> env) {
        String explicit = env.get("AIRLOCK_HOME");
        if (explicit != null && !explicit.isBlank()) {
            return Path.of(explicit);
        }
        String home = env.getOrDefault("HOME", System.getProperty("user.home"));
        return Path.of(home, ".airlock");
    }

    public static Path resolve() {
        return resolve(System.getenv());
    }
}
