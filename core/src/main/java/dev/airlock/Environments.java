package dev.airlock;

import dev.airlock.settings.Settings;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.OpenContext;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/** Finds backends and opens environments by configuration ({@code airlock.backend}, default {@code local}). */
public final class Environments {
    public static final String BACKEND_KEY = "airlock.backend";

    private Environments() {
    }

    /** Opens the backend named by {@code airlock.backend} in the process's settings. */
    public static Environment open() {
        return open(Settings.fromProcess());
    }

    public static Environment open(Settings settings) {
        return open(OpenContext.of(settings));
    }

    public static Environment open(OpenContext context) {
        String name = context.settings().get(BACKEND_KEY, "local").trim();
        return provider(name, Environments.class.getClassLoader()).open(context);
    }

    /** The provider with this name, or an error listing the ones found. */
    public static EnvironmentProvider provider(String name, ClassLoader loader) {
        Map<String, EnvironmentProvider> all = providers(loader);
        EnvironmentProvider p = all.get(name);
        if (p == null) {
            throw new ConfigurationException("no backend named '" + name + "' (" + BACKEND_KEY + "); found: "
                    + (all.isEmpty() ? "none, add a backend jar such as airlock-backend-local to the classpath"
                    : String.join(", ", all.keySet())));
        }
        return p;
    }

    /** Every provider on the class path by name; two with one name is an error naming both classes. */
    public static Map<String, EnvironmentProvider> providers(ClassLoader loader) {
        Map<String, EnvironmentProvider> out = new TreeMap<>();
        for (EnvironmentProvider p : ServiceLoader.load(EnvironmentProvider.class, loader)) {
            EnvironmentProvider prev = out.putIfAbsent(p.name(), p);
            if (prev != null) {
                throw new ConfigurationException("two backends are named '" + p.name() + "': "
                        + prev.getClass().getName() + " and " + p.getClass().getName() + "; remove one jar from the classpath");
            }
        }
        return out;
    }

    /** Each provider with whether it is available under these settings. */
    public static List<Map.Entry<EnvironmentProvider, Availability>> check(Settings settings, ClassLoader loader) {
        List<Map.Entry<EnvironmentProvider, Availability>> out = new ArrayList<>();
        for (EnvironmentProvider p : providers(loader).values()) {
            Availability a;
            try {
                a = p.check(settings);
            } catch (AirlockException e) {
                a = Availability.unavailable(e.getMessage());
            }
            out.add(Map.entry(p, a));
        }
        return out;
    }
}
