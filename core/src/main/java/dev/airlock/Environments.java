package dev.airlock;

import dev.airlock.event.AuditEvent;
import dev.airlock.event.ExecListener;
import dev.airlock.event.ExecTransition;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.settings.CoreSettingKeys;
import dev.airlock.settings.SettingKey;
import dev.airlock.settings.Settings;
import dev.airlock.settings.SettingsCheck;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.OpenContext;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/** Finds backends and opens environments by configuration ({@code airlock.backend}, default {@code local}). */
public final class Environments {
    public static final String BACKEND_KEY = "airlock.backend";
    /** The backends this project publishes, each as {@code dev.airlock:airlock-backend-NAME}. */
    private static final Set<String> OUR_BACKENDS = Set.of("local", "docker", "ssh", "modal", "daytona", "vercel");

    private Environments() {
    }

    /**
     * Opens the backend named by {@code airlock.backend} in the process's settings
     * ({@link Settings#fromProcess()}: the config file, {@code AIRLOCK_*} variables and
     * {@code -Dairlock.*} system properties).
     */
    public static Environment open() {
        return open(Settings.fromProcess());
    }

    /**
     * Opens the backend named by {@code airlock.backend} in exactly these settings. Whatever the
     * process is configured with (config file, {@code AIRLOCK_*} variables, system properties) counts
     * only if {@code settings} came from {@link Settings#fromProcess()}; {@link Settings#of} does not
     * read it.
     */
    public static Environment open(Settings settings) {
        return open(OpenContext.of(settings));
    }

    /**
     * Opening with more than settings: an approval channel and listeners.
     *
     * <pre>{@code
     * try (Environment env = Environments.builder()
     *         .settings(Settings.fromProcess().with("airlock.backend", "local"))
     *         .approvalChannel((request, timeout) -> ApprovalChannel.Decision.DENY)
     *         .onEvent(event -> System.err.println(event))
     *         .open()) {
     *     env.exec(ExecRequest.of("true"));
     * }
     * }</pre>
     */
    public static Builder builder() {
        return new Builder();
    }

    /** What {@link #builder()} returns: settings (the process's unless given), an approval channel, listeners. */
    public static final class Builder {
        private Settings settings;
        private ApprovalChannel channel;
        private final List<ExecListener> listeners = new ArrayList<>();

        private Builder() {
        }

        /** The settings to open with; without this call, {@link Settings#fromProcess()}. */
        public Builder settings(Settings settings) {
            this.settings = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /** Who approves a write that needs approval; without one, such writes follow the settings (yolo, cron mode) or are denied. */
        public Builder approvalChannel(ApprovalChannel channel) {
            this.channel = Objects.requireNonNull(channel, "channel");
            return this;
        }

        /** Observes every exec's transitions and every finished operation, denial and approval. */
        public Builder listener(ExecListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /** A listener for finished operations, denials and approvals, as a lambda. */
        public Builder onEvent(Consumer<AuditEvent> onEvent) {
            return listener(ExecListener.ofEvents(onEvent));
        }

        /** A listener for exec state transitions, as a lambda. */
        public Builder onTransition(Consumer<ExecTransition> onTransition) {
            return listener(ExecListener.ofTransitions(onTransition));
        }

        /** Opens the backend named by {@code airlock.backend}. */
        public Environment open() {
            return Environments.open(context());
        }

        /** The context a provider receives, for opening a provider directly. */
        public OpenContext context() {
            return OpenContext.builder(settings == null ? Settings.fromProcess() : settings).approvalChannel(channel)
                    .listeners(listeners).build();
        }
    }

    /** Opens the backend named by {@code airlock.backend} in the context's settings, with its channel and listeners. */
    public static Environment open(OpenContext context) {
        ClassLoader loader = Environments.class.getClassLoader();
        Map<String, EnvironmentProvider> all = providers(loader);
        for (String warning : SettingsCheck.unknownKeys(context.settings(), settingKeys(all.values()))) {
            LoggerFactory.getLogger(Settings.class).warn(warning);
        }
        String name = context.settings().get(BACKEND_KEY, "local").trim();
        return provider(name, all).open(context);
    }

    /** Every declared setting: the core's and each provider's on this class path. */
    public static List<SettingKey> settingKeys(ClassLoader loader) {
        return settingKeys(providers(loader).values());
    }

    private static List<SettingKey> settingKeys(Collection<EnvironmentProvider> providers) {
        List<SettingKey> out = new ArrayList<>(CoreSettingKeys.ALL);
        providers.forEach(p -> out.addAll(p.settingKeys()));
        return out;
    }

    /** The provider with this name, or an error listing the ones found. */
    public static EnvironmentProvider provider(String name, ClassLoader loader) {
        return provider(name, providers(loader));
    }

    private static EnvironmentProvider provider(String name, Map<String, EnvironmentProvider> all) {
        EnvironmentProvider p = all.get(name);
        if (p != null) {
            return p;
        }
        String found = all.isEmpty() ? "none" : String.join(", ", all.keySet());
        if (OUR_BACKENDS.contains(name)) {
            throw new ConfigurationException("the " + name + " backend (" + BACKEND_KEY + ") is not on the class path:"
                    + " add dev.airlock:airlock-backend-" + name + " to your dependencies; found: " + found);
        }
        Set<String> names = new TreeSet<>(all.keySet());
        names.addAll(OUR_BACKENDS);
        throw new ConfigurationException("no backend named '" + name + "' (" + BACKEND_KEY + "); "
                + SettingsCheck.closestName(name, names).map(n -> "did you mean " + n + "? ").orElse("")
                + "found: " + found + (all.isEmpty() ? ", add a backend jar such as airlock-backend-local to the classpath" : ""));
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
