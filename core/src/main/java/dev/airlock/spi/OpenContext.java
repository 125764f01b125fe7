package dev.airlock.spi;

import dev.airlock.event.ExecListener;
import dev.airlock.safety.ApprovalChannel;
import dev.airlock.settings.Settings;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a provider receives to open an environment: the layered settings, a human channel for
 * writes that need approval (if the runtime has one), and observers of every exec, denial and
 * approval. Built with {@link #builder(Settings)} or {@link #of(Settings)} and the {@code with...}
 * copies, so it can grow without breaking plugins.
 */
public final class OpenContext {
    private final Settings settings;
    private final Optional<ApprovalChannel> approvalChannel;
    private final List<ExecListener> listeners;

    private OpenContext(Builder b) {
        this.settings = Objects.requireNonNull(b.settings, "settings");
        this.approvalChannel = Optional.ofNullable(b.approvalChannel);
        this.listeners = List.copyOf(b.listeners);
    }

    public static Builder builder(Settings settings) {
        return new Builder(settings);
    }

    public static OpenContext of(Settings settings) {
        return builder(settings).build();
    }

    public Builder toBuilder() {
        Builder b = new Builder(settings);
        b.approvalChannel = approvalChannel.orElse(null);
        b.listeners.addAll(listeners);
        return b;
    }

    public Settings settings() {
        return settings;
    }

    public Optional<ApprovalChannel> approvalChannel() {
        return approvalChannel;
    }

    public List<ExecListener> listeners() {
        return listeners;
    }

    public OpenContext withSettings(Settings s) {
        Builder b = toBuilder();
        b.settings = Objects.requireNonNull(s, "settings");
        return b.build();
    }

    public OpenContext withApprovalChannel(ApprovalChannel channel) {
        return toBuilder().approvalChannel(channel).build();
    }

    public OpenContext withListener(ExecListener listener) {
        return toBuilder().listener(listener).build();
    }

    /**
     * Opens an environment on {@code backend}: the core probes the target, prepares the private
     * dir and runs every exec and file operation through the backend's hooks. An {@code airlock.network}
     * mode the backend's {@link dev.airlock.Capabilities#networkModes()} does not hold is refused
     * first (call {@link dev.airlock.NetworkMode#require} before creating a sandbox to refuse
     * sooner). When opening fails
     * the backend is closed (its sandbox stopped) and the failure thrown.
     */
    public dev.airlock.Environment open(Backend backend) {
        dev.airlock.exec.CoreEnvironment env = dev.airlock.exec.CoreEnvironment.create(backend, this);
        try {
            // Before any command: a network mode the backend does not declare is never run open.
            dev.airlock.NetworkMode.require(settings, backend.name(), backend.capabilities().networkModes());
            env.initialize();
            return env;
        } catch (RuntimeException | Error e) {
            env.close();
            throw e;
        }
    }

    /**
     * The backend {@code env} runs on, when {@link #open(Backend)} opened it and the backend is a
     * {@code type}: for a plugin's own tools and tests (a kit's {@code attach} reads the sandbox id
     * there). Empty for any other environment.
     */
    public static <T extends Backend> Optional<T> backendOf(dev.airlock.Environment env, Class<T> type) {
        return env instanceof dev.airlock.exec.CoreEnvironment core ? core.backend(type) : Optional.empty();
    }

    public static final class Builder {
        private Settings settings;
        private ApprovalChannel approvalChannel;
        private final List<ExecListener> listeners = new ArrayList<>();

        private Builder(Settings settings) {
            this.settings = settings;
        }

        /** The human channel for writes that need approval; null for none. */
        public Builder approvalChannel(ApprovalChannel channel) {
            this.approvalChannel = channel;
            return this;
        }

        public Builder listener(ExecListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        public Builder listeners(List<ExecListener> all) {
            all.forEach(this::listener);
            return this;
        }

        public OpenContext build() {
            return new OpenContext(this);
        }
    }
}
