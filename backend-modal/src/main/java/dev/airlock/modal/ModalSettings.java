package dev.airlock.modal;

import dev.airlock.ConfigurationException;
import dev.airlock.NetworkAllowlist;
import dev.airlock.NetworkMode;
import dev.airlock.settings.Secret;
import dev.airlock.settings.Settings;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The modal backend's settings (docs/backends.md has the table). The token pair is secret: it is held
 * as {@link Secret}s and never printed. {@code MODAL_SERVER_URL}, {@code MODAL_TOKEN_ID},
 * {@code MODAL_TOKEN_SECRET}, {@code MODAL_ENVIRONMENT} and {@code MODAL_IMAGE_BUILDER_VERSION} are honoured
 * when the setting is unset.
 */
public record ModalSettings(URI serverUrl, Secret tokenId, Secret tokenSecret, String environment, String app,
                            String image, int milliCpu, int memoryMb, Duration sandboxTimeout, Optional<String> workdir,
                            Map<String, String> env, Optional<Path> caFile, Optional<String> sandboxId, boolean v2,
                            Duration apiTimeout, Optional<String> imageBuilderVersion, NetworkMode network,
                            java.util.SortedSet<Integer> ports, Optional<String> snapshot, List<NetworkAllowlist.Entry> allowed) {
    public static final String PREFIX = "airlock.modal";
    public static final String SERVER_URL = PREFIX + ".server-url";
    public static final String TOKEN_ID = PREFIX + ".token-id";
    public static final String TOKEN_SECRET = PREFIX + ".token-secret";
    public static final String ENVIRONMENT = PREFIX + ".environment";
    public static final String APP = PREFIX + ".app";
    public static final String IMAGE = PREFIX + ".image";
    public static final String CPU = PREFIX + ".cpu";
    public static final String MEMORY = PREFIX + ".memory";
    public static final String TIMEOUT = PREFIX + ".sandbox-timeout";
    public static final String WORKDIR = PREFIX + ".workdir";
    public static final String ENV = PREFIX + ".env";
    public static final String CA_FILE = PREFIX + ".ca-file";
    public static final String SANDBOX_ID = PREFIX + ".sandbox-id";
    public static final String FAMILY = PREFIX + ".sandbox-family";
    public static final String API_TIMEOUT = PREFIX + ".api-timeout";
    /** The image builder version; else MODAL_IMAGE_BUILDER_VERSION; else the environment's, asked of the service, as the SDK does. */
    public static final String IMAGE_BUILDER_VERSION = PREFIX + ".image-builder-version";
    /**
     * A filesystem snapshot's image id ({@code Environment.snapshot()}, {@code airlock snapshot}): the
     * sandbox is created from it instead of {@link #IMAGE}.
     */
    public static final String SNAPSHOT = PREFIX + ".snapshot";
    public static final String DEFAULT_SERVER_URL = "https://api.modal.com:443";
    /**
     * {@code off} is the create's {@code block_network}; {@code allowlist} its CIDR and domain
     * allowlists (on every port: an entry with a port is refused at open, never widened).
     */
    public static final Set<NetworkMode> NETWORK_MODES = EnumSet.allOf(NetworkMode.class);

    public static ModalSettings from(Settings s, Map<String, String> processEnv) {
        NetworkMode network = NetworkMode.require(s, "modal", NETWORK_MODES); // before anything is created
        String url = s.get(SERVER_URL).or(() -> Optional.ofNullable(processEnv.get("MODAL_SERVER_URL")))
                .filter(v -> !v.isBlank()).orElse(DEFAULT_SERVER_URL).trim();
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(SERVER_URL + " '" + url + "' is not a URL (e.g. https://api.modal.com:443)");
        }
        if (!("https".equals(uri.getScheme()) || "http".equals(uri.getScheme())) || uri.getHost() == null) {
            throw new ConfigurationException(SERVER_URL + " '" + url + "' must be http://HOST:PORT or https://HOST:PORT");
        }
        String id = s.get(TOKEN_ID).or(() -> Optional.ofNullable(processEnv.get("MODAL_TOKEN_ID"))).orElse("");
        String secret = s.get(TOKEN_SECRET).or(() -> Optional.ofNullable(processEnv.get("MODAL_TOKEN_SECRET"))).orElse("");
        if (id.isBlank() || secret.isBlank()) {
            throw new ConfigurationException("Modal needs a token: set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET (or "
                    + TOKEN_ID + " and " + TOKEN_SECRET + "); create one with `modal token new`");
        }
        double cpu;
        try {
            cpu = Double.parseDouble(s.get(CPU, "0.125"));
        } catch (NumberFormatException e) {
            throw new ConfigurationException(CPU + " must be a number of cores like 0.5 or 2");
        }
        if (cpu <= 0 || cpu > 64) {
            throw new ConfigurationException(CPU + " must be between 0 and 64 cores");
        }
        int memory = s.getInt(MEMORY, 128);
        if (memory <= 0) {
            throw new ConfigurationException(MEMORY + " is in MiB and must be positive");
        }
        Duration timeout = s.getDuration(TIMEOUT, Duration.ofMinutes(10));
        if (timeout.isNegative() || timeout.isZero() || timeout.toSeconds() > 86_400) {
            throw new ConfigurationException(TIMEOUT + " must be between 1s and 24h");
        }
        Optional<Path> ca = s.get(CA_FILE).filter(v -> !v.isBlank()).map(Path::of);
        if (ca.isPresent() && !Files.isReadable(ca.get())) {
            throw new ConfigurationException(CA_FILE + " " + ca.get() + " is not a readable PEM file");
        }
        String family = s.getChoice(FAMILY, "v2", "v2", "v1");
        Optional<String> sandboxId = s.get(SANDBOX_ID).filter(v -> !v.isBlank());
        Optional<String> snapshot = s.get(SNAPSHOT).map(String::trim).filter(v -> !v.isEmpty());
        if (snapshot.isPresent() && sandboxId.isPresent()) {
            throw new ConfigurationException("set " + SNAPSHOT + " or " + SANDBOX_ID + ", not both: a snapshot starts a new sandbox");
        }
        java.util.SortedSet<Integer> ports = dev.airlock.Ports.declared(s);
        if (!ports.isEmpty() && network == NetworkMode.OFF) {
            // Modal's SDKs refuse open ports on a sandbox whose network is blocked.
            throw new ConfigurationException(dev.airlock.Ports.KEY + " declares ports, but " + NetworkMode.KEY
                    + "=off blocks the Modal sandbox's network, tunnels included; drop one of them");
        }
        return new ModalSettings(uri, Secret.of(id.trim()), Secret.of(secret.trim()),
                s.get(ENVIRONMENT).or(() -> Optional.ofNullable(processEnv.get("MODAL_ENVIRONMENT"))).orElse(""),
                s.get(APP, "airlock"), s.get(IMAGE, "debian:bookworm-slim"), (int) Math.round(cpu * 1000), memory,
                timeout, s.get(WORKDIR).filter(v -> !v.isBlank()), s.keys(ENV), ca,
                sandboxId, family.equals("v2"),
                s.getDuration(API_TIMEOUT, Duration.ofSeconds(60)),
                s.get(IMAGE_BUILDER_VERSION).or(() -> Optional.ofNullable(processEnv.get("MODAL_IMAGE_BUILDER_VERSION")))
                        .map(String::trim).filter(v -> !v.isEmpty()), network, java.util.Collections.unmodifiableSortedSet(ports),
                snapshot, network == NetworkMode.ALLOWLIST ? NetworkAllowlist.from(s).onEveryPort("modal", true) : List.of());
    }

    /** Whether the control plane is on loopback: the official SDKs then speak plaintext to the router too. */
    public boolean loopback() {
        String h = serverUrl.getHost();
        return h.equals("localhost") || h.equals("127.0.0.1") || h.equals("::1") || h.equals("[::1]");
    }

    public boolean plaintext() {
        return "http".equals(serverUrl.getScheme());
    }

    public int port() {
        return serverUrl.getPort() > 0 ? serverUrl.getPort() : plaintext() ? 80 : 443;
    }
}
