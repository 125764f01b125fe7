package dev.airlock.docker;

import dev.airlock.ConfigurationException;
import dev.airlock.NetworkMode;
import dev.airlock.settings.Settings;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * The Docker backend's settings, read once when an environment opens.
 *
 * <table>
 *   <caption>docker settings</caption>
 *   <tr><th>key</th><th>type</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>airlock.docker.image</td><td>string</td><td>(required unless container is set)</td><td>image of the container</td></tr>
 *   <tr><td>airlock.docker.host</td><td>unix:///PATH, tcp://HOST[:PORT] (2375, 2376 with TLS) or ssh://[USER@]HOST[:PORT]</td><td>DOCKER_HOST, else DOCKER_CONTEXT's, else the current context's, else unix:///var/run/docker.sock</td><td>the daemon</td></tr>
 *   <tr><td>airlock.docker.tls-verify</td><td>boolean</td><td>true when DOCKER_TLS_VERIFY is non-empty or the context has TLS material</td><td>TLS to a tcp:// daemon, verified against ca.pem, with cert.pem and key.pem</td></tr>
 *   <tr><td>airlock.docker.cert-path</td><td>directory</td><td>DOCKER_CERT_PATH, else the context's TLS material, else DOCKER_CONFIG or ~/.docker</td><td>where ca.pem, cert.pem and key.pem are</td></tr>
 *   <tr><td>airlock.docker.ssh-config</td><td>file</td><td>ssh's own (~/.ssh/config)</td><td>the OpenSSH config file for an ssh:// host ({@code ssh -F})</td></tr>
 *   <tr><td>airlock.docker.container</td><td>id or name</td><td>(none)</td><td>attach to this running container; never removed</td></tr>
 *   <tr><td>airlock.docker.cpus</td><td>decimal</td><td>(unlimited)</td><td>like {@code docker run --cpus}</td></tr>
 *   <tr><td>airlock.docker.memory</td><td>bytes (512m, 2g)</td><td>(unlimited)</td><td>memory limit, swap included</td></tr>
 *   <tr><td>airlock.docker.pids-limit</td><td>int</td><td>512</td><td>most processes in the container</td></tr>
 *   <tr><td>airlock.docker.network</td><td>string</td><td>none</td><td>network mode: none, bridge or a network name; unset: bridge under airlock.network=on</td></tr>
 *   <tr><td>airlock.docker.user</td><td>user[:group]</td><td>the image's</td><td>user the container and its commands run as</td></tr>
 *   <tr><td>airlock.docker.workdir</td><td>path</td><td>the image's</td><td>working directory of the container</td></tr>
 *   <tr><td>airlock.docker.env.NAME</td><td>string</td><td></td><td>variables of the container</td></tr>
 *   <tr><td>airlock.docker.volumes</td><td>list of HOST:CONTAINER[:ro]</td><td></td><td>bind mounts</td></tr>
 *   <tr><td>airlock.docker.runtime</td><td>string</td><td>the daemon's</td><td>OCI runtime, e.g. runsc</td></tr>
 *   <tr><td>airlock.docker.pull</td><td>missing|never</td><td>missing</td><td>pull the image when the daemon lacks it</td></tr>
 *   <tr><td>airlock.docker.api-timeout</td><td>duration</td><td>2m</td><td>bound on one API call (never on a command)</td></tr>
 *   <tr><td>airlock.docker.files</td><td>shell|archive</td><td>shell</td><td>archive: writes through the archive API where they land where commands look (see {@code DockerFiles}), else the shell path</td></tr>
 *   <tr><td>airlock.docker.read-only, tmpfs, ulimits, shm-size, storage-size, devices, gpus, platform</td><td colspan="3">see {@link DockerHardening}</td></tr>
 * </table>
 */
public record DockerSettings(URI host, Optional<String> image, Optional<String> container, Optional<Double> cpus,
                             OptionalLong memory, long pidsLimit, String network, Optional<String> user,
                             Optional<String> workdir, Map<String, String> env, List<String> volumes,
                             Optional<String> runtime, boolean pullMissing, Duration apiTimeout, boolean archiveWrites, DockerHardening hardening,
                             Path dockerConfig, Map<String, String> labels, Optional<DockerTls> tls, List<Path> searchPath,
                             Optional<Path> sshConfig, java.util.SortedSet<Integer> ports, Optional<String> snapshot) {
    public static final String IMAGE = "airlock.docker.image";
    public static final String HOST = "airlock.docker.host";
    public static final String TLS_VERIFY = "airlock.docker.tls-verify";
    public static final String CERT_PATH = "airlock.docker.cert-path";
    public static final String CONTAINER = "airlock.docker.container";
    /** A snapshot's image id ({@code Environment.snapshot()}): the container starts from it instead of {@link #IMAGE}. */
    public static final String SNAPSHOT = "airlock.docker.snapshot";
    /** The OpenSSH config file for an {@code ssh://} host ({@code ssh -F}); ssh's own when unset. */
    public static final String SSH_CONFIG = "airlock.docker.ssh-config";
    public static final String CPUS = "airlock.docker.cpus";
    public static final String MEMORY = "airlock.docker.memory";
    public static final String PIDS_LIMIT = "airlock.docker.pids-limit";
    public static final String NETWORK = "airlock.docker.network";
    public static final String USER = "airlock.docker.user";
    public static final String WORKDIR = "airlock.docker.workdir";
    public static final String ENV = "airlock.docker.env";
    public static final String VOLUMES = "airlock.docker.volumes";
    public static final String RUNTIME = "airlock.docker.runtime";
    public static final String PULL = "airlock.docker.pull";
    public static final String API_TIMEOUT = "airlock.docker.api-timeout";
    public static final String FILES = "airlock.docker.files";
    /** {@code airlock.docker.labels.NAME=value}: the user's own labels on every container (Airlock's prefix is reserved). */
    public static final String LABELS = "airlock.docker.labels";

    /** Docker's own variable for the daemon; a settings builder maps it with {@code nativeVariable}. */
    public static final String DOCKER_HOST = "DOCKER_HOST";
    public static final String DEFAULT_HOST = "unix:///var/run/docker.sock";

    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    public DockerSettings {
        env = Map.copyOf(env);
        volumes = List.copyOf(volumes);
        searchPath = List.copyOf(searchPath);
    }

    /**
     * Reads the settings. {@code environment} is the process environment, for {@code DOCKER_HOST}
     * when the settings were built without it as a native variable.
     */
    public static DockerSettings from(Settings s, Map<String, String> environment) {
        DockerCliConfig.Endpoint endpoint = endpoint(s, environment);
        URI given = parseHost(endpoint.host(), endpoint.origin());
        Optional<DockerTls> tls = tls(s, environment, given, endpoint);
        URI host = withDefaultPort(given, tls.isPresent());
        Optional<String> container = nonBlank(s, CONTAINER);
        Optional<String> snapshot = nonBlank(s, SNAPSHOT);
        if (snapshot.isPresent() && container.isPresent()) {
            throw new ConfigurationException("set " + SNAPSHOT + " or " + CONTAINER + ", not both: a snapshot starts a new container");
        }
        // A snapshot is an image of this daemon's, by id: never pulled, and it takes the image's place.
        Optional<String> image = snapshot.isPresent() ? snapshot : nonBlank(s, IMAGE).map(DockerSettings::withDefaultTag);
        Optional<Double> cpus = nonBlank(s, CPUS).map(v -> {
            try {
                double d = Double.parseDouble(v);
                if (d > 0 && d <= 1024) {
                    return d;
                }
            } catch (NumberFormatException ignored) {
                // reported below
            }
            throw new ConfigurationException("setting " + CPUS + " has invalid value '" + v + "': expected a number of CPUs such as 0.5 or 2");
        });
        OptionalLong memory = s.get(MEMORY).filter(v -> !v.isBlank()).isPresent()
                ? OptionalLong.of(s.getBytes(MEMORY, 0)) : OptionalLong.empty();
        if (memory.isPresent() && memory.getAsLong() < 6L << 20) {
            throw new ConfigurationException("setting " + MEMORY + " must be at least 6m (Docker's minimum), got " + memory.getAsLong() + " bytes");
        }
        int pids = s.getInt(PIDS_LIMIT, 512);
        if (pids < 8) {
            throw new ConfigurationException("setting " + PIDS_LIMIT + " must be at least 8, got " + pids);
        }
        String network = network(s);
        java.util.SortedSet<Integer> ports = dev.airlock.Ports.declared(s);
        if (!ports.isEmpty() && network.equals("none") && container.isEmpty()) {
            throw new ConfigurationException(dev.airlock.Ports.KEY + "=" + ports.stream().map(String::valueOf)
                    .collect(java.util.stream.Collectors.joining(",")) + " needs the container on a network to publish"
                    + " them, and its network is none (docker's default while " + NetworkMode.KEY + " is unset); set "
                    + NetworkMode.KEY + "=on");
        }
        Map<String, String> env = s.keys(ENV);
        for (String name : env.keySet()) {
            if (!ENV_NAME.matcher(name).matches()) {
                throw new ConfigurationException("setting " + ENV + "." + name + ": '" + name + "' is not a valid variable name");
            }
        }
        Map<String, String> labels = s.keys(LABELS);
        for (String name : labels.keySet()) {
            if (name.startsWith(DockerDaemon.LABEL_PREFIX)) {
                throw new ConfigurationException("setting " + LABELS + "." + name + ": labels under " + DockerDaemon.LABEL_PREFIX
                        + " are Airlock's own (gc trusts them); choose another name");
            }
        }
        List<String> volumes = s.getList(VOLUMES);
        for (String v : volumes) {
            String[] parts = v.split(":");
            if (parts.length < 2 || parts.length > 3 || parts[0].isEmpty() || !parts[1].startsWith("/")
                    || (parts.length == 3 && !parts[2].matches("ro|rw"))) {
                throw new ConfigurationException("setting " + VOLUMES + " has invalid entry '" + v
                        + "': expected HOST_PATH:CONTAINER_PATH or HOST_PATH:CONTAINER_PATH:ro");
            }
        }
        boolean pullMissing = snapshot.isEmpty() && "missing".equals(s.getChoice(PULL, "missing", "missing", "never"));
        Duration apiTimeout = s.getDuration(API_TIMEOUT, Duration.ofMinutes(2));
        if (apiTimeout.isZero() || apiTimeout.isNegative()) {
            throw new ConfigurationException("setting " + API_TIMEOUT + " must be positive");
        }
        boolean archiveWrites = "archive".equals(s.getChoice(FILES, "shell", "archive", "shell"));
        return new DockerSettings(host, image, container, cpus, memory, pids, network, nonBlank(s, USER),
                nonBlank(s, WORKDIR), env, volumes, nonBlank(s, RUNTIME), pullMissing, apiTimeout, archiveWrites, DockerHardening.from(s),
                DockerCliConfig.dir(environment), labels, tls, searchPath(environment), sshConfig(s, host), ports, snapshot);
    }

    /** The ssh config file, checked where the host is {@code ssh://} (elsewhere it is not used). */
    private static Optional<Path> sshConfig(Settings s, URI host) {
        Optional<Path> file = nonBlank(s, SSH_CONFIG).map(Path::of);
        if (file.isPresent() && "ssh".equals(host.getScheme()) && !java.nio.file.Files.isReadable(file.get())) {
            throw new ConfigurationException("setting " + SSH_CONFIG + " names " + file.get() + ", which is not a readable file");
        }
        return file;
    }

    /** {@code PATH}'s directories, where the Docker CLI's credential helpers are found. */
    private static List<Path> searchPath(Map<String, String> environment) {
        List<Path> out = new java.util.ArrayList<>();
        for (String d : environment.getOrDefault("PATH", "").split(":")) {
            if (!d.isBlank()) {
                out.add(Path.of(d));
            }
        }
        return out;
    }

    /** These settings with another bound on API calls (e.g. a quick availability check). */
    public DockerSettings withApiTimeout(Duration timeout) {
        return new DockerSettings(host, image, container, cpus, memory, pidsLimit, network, user, workdir, env, volumes,
                runtime, pullMissing, timeout, archiveWrites, hardening, dockerConfig, labels, tls, searchPath, sshConfig, ports, snapshot);
    }

    /** The image, or the error that names the setting. */
    public String requireImage() {
        return image.orElseThrow(() -> new ConfigurationException("setting " + IMAGE + " is required for the docker backend"
                + " (or " + CONTAINER + " to attach to a running container): pass --set " + IMAGE + "=IMAGE or export "
                + Settings.envName(IMAGE)));
    }

    /**
     * The image reference as the Docker CLI reads it: without a tag or digest it means
     * {@code :latest} (the API, given no tag, would pull every tag of the repository).
     */
    static String withDefaultTag(String image) {
        if (image.contains("@")) {
            return image;
        }
        int slash = image.lastIndexOf('/');
        return image.indexOf(':', slash + 1) >= 0 ? image : image + ":latest";
    }

    /** {@code [repository, tag or digest]} of a reference that has one (see {@link #withDefaultTag}). */
    static String[] splitReference(String image) {
        int at = image.indexOf('@');
        if (at >= 0) {
            return new String[] {image.substring(0, at), image.substring(at + 1)};
        }
        String full = withDefaultTag(image);
        int colon = full.lastIndexOf(':');
        return new String[] {full.substring(0, colon), full.substring(colon + 1)};
    }

    /** The unix socket path when the host is {@code unix://}. */
    Optional<String> socketPath() {
        return "unix".equals(host.getScheme()) ? Optional.of(host.getPath()) : Optional.empty();
    }

    /**
     * {@code airlock.docker.host} from the settings, else {@code DOCKER_HOST}, else the contexts,
     * else the local socket. {@code DOCKER_HOST} sits above the config file and defaults, as a
     * native variable does in {@link Settings}; this keeps that order for settings built without the mapping.
     */
    private static DockerCliConfig.Endpoint endpoint(Settings s, Map<String, String> environment) {
        Optional<String> set = s.get(HOST).filter(v -> !v.isBlank());
        String origin = s.origin(HOST).orElse("default");
        String native_ = environment.getOrDefault(DOCKER_HOST, "");
        if (set.isPresent() && !origin.equals("config file") && !origin.equals("default")) {
            // Mapped from DOCKER_HOST (a native variable): its errors name that variable, not a setting the user never set.
            return new DockerCliConfig.Endpoint(set.get().trim(), Optional.empty(),
                    origin.equals("native variable") ? DOCKER_HOST : HOST);
        }
        if (!native_.isBlank()) {
            return new DockerCliConfig.Endpoint(native_.trim(), Optional.empty(), DOCKER_HOST);
        }
        // As the Docker CLI: DOCKER_CONTEXT, then config.json's currentContext (below Airlock's own config file).
        Optional<DockerCliConfig.Endpoint> named = DockerCliConfig.namedContext(environment);
        if (named.isPresent()) {
            return named.get();
        }
        if (set.isPresent()) {
            return new DockerCliConfig.Endpoint(set.get().trim(), Optional.empty(), HOST);
        }
        return DockerCliConfig.currentContext(environment)
                .orElse(new DockerCliConfig.Endpoint(DEFAULT_HOST, Optional.empty(), "default"));
    }

    /**
     * TLS for a {@code tcp://} daemon, decided as the Docker CLI decides it: {@code DOCKER_TLS_VERIFY}
     * set to anything non-empty (the CLI's own test), or a context that carries TLS material;
     * {@link #TLS_VERIFY} overrides both. A unix socket never uses TLS, as with the CLI.
     */
    private static Optional<DockerTls> tls(Settings s, Map<String, String> environment, URI host,
                                           DockerCliConfig.Endpoint endpoint) {
        if (!"tcp".equals(host.getScheme())) {
            return Optional.empty();
        }
        boolean fromEnvironment = !environment.getOrDefault("DOCKER_TLS_VERIFY", "").isEmpty();
        boolean verify = s.get(TLS_VERIFY).filter(v -> !v.isBlank()).isPresent()
                ? s.getBoolean(TLS_VERIFY, false) : fromEnvironment || endpoint.tlsDir().isPresent();
        if (!verify) {
            return Optional.empty();
        }
        Optional<String> setPath = nonBlank(s, CERT_PATH);
        if (setPath.isPresent()) {
            return Optional.of(new DockerTls(Path.of(setPath.get()), CERT_PATH));
        }
        String envPath = environment.getOrDefault("DOCKER_CERT_PATH", "");
        if (!envPath.isBlank()) {
            return Optional.of(new DockerTls(Path.of(envPath), "DOCKER_CERT_PATH"));
        }
        if (endpoint.tlsDir().isPresent()) {
            return Optional.of(new DockerTls(endpoint.tlsDir().get(), endpoint.origin()));
        }
        return Optional.of(new DockerTls(DockerCliConfig.dir(environment), "the Docker CLI's configuration directory"));
    }

    static URI parseHost(String raw) {
        return parseHost(raw, HOST);
    }

    /**
     * The daemon's address as the Docker CLI takes it: {@code unix:///PATH}, {@code tcp://HOST[:PORT]}
     * (the port defaults once TLS is decided, see {@link #withDefaultPort}) or
     * {@code ssh://[USER@]HOST[:PORT]} (through {@code docker system dial-stdio} there, see {@link SshDialer}). {@code origin} is where
     * the value came from ({@code airlock.docker.host}, {@code DOCKER_HOST}, a Docker context), which
     * its errors name.
     */
    static URI parseHost(String raw, String origin) {
        String from = origin.equals(HOST) ? "setting " + HOST : origin.equals(DOCKER_HOST) ? "the environment variable " + DOCKER_HOST : origin;
        URI uri;
        try {
            uri = URI.create(raw);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(from + " has invalid value '" + raw + "': expected unix:///PATH, tcp://HOST[:PORT] or ssh://[USER@]HOST[:PORT]");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        switch (scheme) {
            case "unix" -> {
                if (uri.getPath() == null || uri.getPath().isEmpty()) {
                    throw new ConfigurationException(from + " has invalid value '" + raw + "': expected unix:///PATH");
                }
                return uri;
            }
            case "tcp" -> {
                if (uri.getHost() == null) {
                    throw new ConfigurationException(from + " has invalid value '" + raw + "': expected tcp://HOST[:PORT]");
                }
                return uri;
            }
            case "ssh" -> {
                if (uri.getHost() == null || (uri.getRawPath() != null && !uri.getRawPath().isEmpty()) || uri.getRawQuery() != null) {
                    throw new ConfigurationException(from + " has invalid value '" + raw + "': expected ssh://[USER@]HOST[:PORT]");
                }
                return uri;
            }
            default -> throw new ConfigurationException(from + " '" + raw + "' is not supported: use unix:///PATH,"
                    + " tcp://HOST[:PORT] (TLS with DOCKER_TLS_VERIFY or " + TLS_VERIFY + ") or ssh://[USER@]HOST[:PORT]");
        }
    }

    /** {@code tcp://HOST} without a port: Docker's 2375, or 2376 with TLS, as the Docker CLI does. */
    static URI withDefaultPort(URI host, boolean tls) {
        if (!"tcp".equalsIgnoreCase(host.getScheme()) || host.getPort() > 0) {
            return host;
        }
        return URI.create("tcp://" + host.getRawAuthority() + ":" + (tls ? 2376 : 2375)
                + (host.getRawPath() == null ? "" : host.getRawPath()));
    }

    /**
     * The container's network: {@code airlock.docker.network} when set, else none, or the daemon's
     * default bridge when {@code airlock.network=on} or {@code allowlist} is asked. {@code airlock.network=off} with a
     * network other than none is a conflict, never a container on that network.
     */
    private static String network(Settings s) {
        Optional<String> own = s.get(NETWORK).map(String::trim);
        if (own.isPresent() && own.get().isEmpty()) {
            throw new ConfigurationException("setting " + NETWORK + " is empty: use none (the default), bridge or a network name");
        }
        NetworkMode mode = NetworkMode.from(s);
        if (mode == NetworkMode.OFF && own.isPresent() && !own.get().equals("none")) {
            throw new ConfigurationException(NetworkMode.KEY + "=off and " + NETWORK + "=" + own.get()
                    + " disagree: off means --network none; remove one of them");
        }
        // allowlist: the default bridge, with the rules NamespaceFirewall writes into the container's namespace.
        return own.orElse(NetworkMode.isSet(s) && mode != NetworkMode.OFF ? "bridge" : "none");
    }

    private static Optional<String> nonBlank(Settings s, String key) {
        return s.get(key).map(String::trim).filter(v -> !v.isEmpty());
    }
}
