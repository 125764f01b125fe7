package dev.airlock;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * What a backend does natively. The core fills the gaps (staged env, process-group kill, files
 * through {@code sh}); the compatibility kit and callers read this to know which optional cases
 * apply. Nothing here lets a backend skip the mandatory core of the kit. Built with
 * {@link #builder()} (or from {@link #pipe()} with the {@code with...} copies), so fields can be
 * added without breaking plugins; every field here is read by the core or the kit.
 */
public final class Capabilities {
    private final StdinMode stdinMode;
    private final boolean nativeEnv;
    private final boolean attachable;
    private final boolean disposable;
    private final int argvLimit;
    private final OutputTransport outputTransport;
    private final PayloadStrategy payloadStrategy;
    private final Set<NetworkMode> networkModes;
    private final PortSupport ports;
    private final boolean snapshots;

    private Capabilities(Builder b) {
        if (b.argvLimit < 1024) {
            throw new IllegalArgumentException("argvLimit must be at least 1024 bytes, got " + b.argvLimit);
        }
        this.stdinMode = Objects.requireNonNull(b.stdinMode, "stdinMode");
        this.nativeEnv = b.nativeEnv;
        this.attachable = b.attachable;
        this.disposable = b.disposable;
        this.argvLimit = b.argvLimit;
        this.outputTransport = Objects.requireNonNull(b.outputTransport, "outputTransport");
        this.payloadStrategy = Objects.requireNonNull(b.payloadStrategy, "payloadStrategy");
        this.networkModes = Set.copyOf(Objects.requireNonNull(b.networkModes, "networkModes"));
        this.ports = Objects.requireNonNull(b.ports, "ports");
        this.snapshots = b.snapshots;
    }

    /** A shell backend with streamed stdin and nothing else native. */
    public static Builder builder() {
        return new Builder();
    }

    /** What a shell backend with streamed stdin and nothing else native starts from. */
    public static Capabilities pipe() {
        return builder().build();
    }

    public Builder toBuilder() {
        return new Builder().stdinMode(stdinMode).nativeEnv(nativeEnv).attachable(attachable).disposable(disposable)
                .argvLimit(argvLimit).outputTransport(outputTransport).payloadStrategy(payloadStrategy)
                .networkModes(networkModes).ports(ports).snapshots(snapshots);
    }

    /** How stdin is delivered. */
    public StdinMode stdinMode() {
        return stdinMode;
    }

    /** Env variables travel in the backend's protocol (else the core stages a 0600 env script). */
    public boolean nativeEnv() {
        return nativeEnv;
    }

    /** A second environment can attach to the same sandbox. */
    public boolean attachable() {
        return attachable;
    }

    /** A fresh sandbox with no host mounts, thrown away on close. */
    public boolean disposable() {
        return disposable;
    }

    /** The longest command text the backend passes in one call; longer scripts are staged. */
    public int argvLimit() {
        return argvLimit;
    }

    /** How stdout and stderr come back: streamed, or as files downloaded after the end. */
    public OutputTransport outputTransport() {
        return outputTransport;
    }

    /** How a PAYLOAD backend takes stdin: staged as a 0600 file, or streamed by the backend's writer. */
    public PayloadStrategy payloadStrategy() {
        return payloadStrategy;
    }

    /**
     * The {@code airlock.network} modes this backend enforces ({@code on} unless it says more). The
     * core refuses to open with any other, and the kit's NetworkPolicy cases run for these only.
     */
    public Set<NetworkMode> networkModes() {
        return networkModes;
    }

    /**
     * {@link Environment#snapshot()} saves the sandbox's files and {@code airlock.BACKEND.snapshot=ID}
     * opens a new sandbox from them (false unless the backend says so: its snapshot() then fails in
     * one line, and the kit's Snapshots cases skip).
     */
    public boolean snapshots() {
        return snapshots;
    }

    public Capabilities withSnapshots(boolean v) {
        return toBuilder().snapshots(v).build();
    }

    /**
     * How the backend exposes the sandbox's ports ({@link Environment#ports()}): {@code NONE} unless
     * it says more, and {@link Ports#expose} then fails in one line naming the backend.
     */
    public PortSupport ports() {
        return ports;
    }

    public Capabilities withPorts(PortSupport p) {
        return toBuilder().ports(p).build();
    }

    public Capabilities withNetworkModes(Set<NetworkMode> modes) {
        return toBuilder().networkModes(modes).build();
    }

    public Capabilities withOutputTransport(OutputTransport t) {
        return toBuilder().outputTransport(t).build();
    }

    public Capabilities withPayloadStrategy(PayloadStrategy p) {
        return toBuilder().payloadStrategy(p).build();
    }

    public Capabilities withNativeEnv(boolean v) {
        return toBuilder().nativeEnv(v).build();
    }

    public Capabilities withStdinMode(StdinMode mode) {
        return toBuilder().stdinMode(mode).build();
    }

    public Capabilities withAttachable(boolean v) {
        return toBuilder().attachable(v).build();
    }

    public Capabilities withDisposable(boolean v) {
        return toBuilder().disposable(v).build();
    }

    public Capabilities withArgvLimit(int bytes) {
        return toBuilder().argvLimit(bytes).build();
    }

    /** Whether stdin, output and files arrive exactly. False only for HEREDOC backends. */
    public boolean byteExact() {
        return stdinMode.isByteExact();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Capabilities c && c.stdinMode == stdinMode && c.nativeEnv == nativeEnv
                && c.attachable == attachable && c.disposable == disposable && c.argvLimit == argvLimit
                && c.outputTransport == outputTransport && c.payloadStrategy == payloadStrategy
                && c.networkModes.equals(networkModes) && c.ports == ports && c.snapshots == snapshots;
    }

    @Override
    public int hashCode() {
        return Objects.hash(stdinMode, nativeEnv, attachable, disposable, argvLimit, outputTransport, payloadStrategy,
                networkModes, ports, snapshots);
    }

    @Override
    public String toString() {
        return "Capabilities[stdinMode=" + stdinMode + ", nativeEnv=" + nativeEnv + ", attachable=" + attachable
                + ", disposable=" + disposable + ", argvLimit=" + argvLimit + ", outputTransport=" + outputTransport
                + ", payloadStrategy=" + payloadStrategy + ", networkModes=" + new java.util.TreeSet<>(networkModes)
                + ", ports=" + ports + ", snapshots=" + snapshots + "]";
    }

    /** Defaults: PIPE stdin, staged env, not attachable, not disposable, a 96 KiB argv, STREAM output, STAGED payloads, network on only, no ports, no snapshots. */
    public static final class Builder {
        private StdinMode stdinMode = StdinMode.PIPE;
        private boolean nativeEnv;
        private boolean attachable;
        private boolean disposable;
        private int argvLimit = 96 * 1024;
        private OutputTransport outputTransport = OutputTransport.STREAM;
        private PayloadStrategy payloadStrategy = PayloadStrategy.STAGED;
        private Set<NetworkMode> networkModes = EnumSet.of(NetworkMode.ON);
        private PortSupport ports = PortSupport.NONE;
        private boolean snapshots;

        private Builder() {
        }

        /** The backend implements {@link dev.airlock.spi.Backend#snapshot} and opens from its ids; declare it only then. */
        public Builder snapshots(boolean v) {
            this.snapshots = v;
            return this;
        }

        public Builder stdinMode(StdinMode mode) {
            this.stdinMode = mode;
            return this;
        }

        public Builder nativeEnv(boolean v) {
            this.nativeEnv = v;
            return this;
        }

        public Builder attachable(boolean v) {
            this.attachable = v;
            return this;
        }

        public Builder disposable(boolean v) {
            this.disposable = v;
            return this;
        }

        public Builder outputTransport(OutputTransport t) {
            this.outputTransport = t;
            return this;
        }

        public Builder payloadStrategy(PayloadStrategy p) {
            this.payloadStrategy = p;
            return this;
        }

        /** The {@code airlock.network} modes the backend enforces; declare {@code OFF} only if it really cuts the network. */
        public Builder networkModes(Set<NetworkMode> modes) {
            this.networkModes = modes;
            return this;
        }

        /** How the backend exposes ports; declare it only with a {@link dev.airlock.spi.Backend#portForwarder()}. */
        public Builder ports(PortSupport p) {
            this.ports = p;
            return this;
        }

        public Builder argvLimit(int bytes) {
            this.argvLimit = bytes;
            return this;
        }

        public Capabilities build() {
            return new Capabilities(this);
        }
    }
}
