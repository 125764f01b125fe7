package dev.airlock.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.command.InspectExecResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.AuthConfig;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Image;
import com.github.dockerjava.api.model.Volume;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import com.github.dockerjava.transport.SSLConfig;
import dev.airlock.spi.Holder;
import dev.airlock.spi.ResourceLabels;
import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import dev.airlock.NoSuchPathException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;

/**
 * The Docker API calls the backend makes, through docker-java, with its errors turned into
 * Airlock's: an unreachable daemon is {@link BackendUnavailableException}, a bad image or option
 * a {@link ConfigurationException}. Nothing here retries; the exec start itself goes through
 * {@link HijackedExec}.
 */
final class DockerDaemon implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(DockerDaemon.class);

    /** The labels' prefix: {@link ResourceLabels} names behind it (existing containers stay found). */
    static final String LABEL_PREFIX = "dev.airlock.";
    static final String LABEL_MANAGED = LABEL_PREFIX + ResourceLabels.MANAGED;
    static final String LABEL_OWNER = LABEL_PREFIX + ResourceLabels.OWNER;
    static final String LABEL_CREATED = LABEL_PREFIX + ResourceLabels.CREATED;
    static final String LABEL_ENVIRONMENT = LABEL_PREFIX + "environment";
    /** The process using the container ({@link Holder}); none on what {@code up} keeps, which outlives its process. */
    static final String LABEL_HOLDER = LABEL_PREFIX + ResourceLabels.HOLDER;
    /** On a snapshot image: the container it was taken of (containers made from it inherit the label). */
    static final String LABEL_SNAPSHOT_OF = LABEL_PREFIX + "snapshot-of";
    /**
     * Where a container Airlock creates gets an anonymous volume (unless a tmpfs or a bind is
     * already there): the core's private dir lives under it, and {@code docker commit} takes no
     * volume, so a snapshot never holds staged files, sessions or the children's TMPDIR.
     */
    static final String PRIVATE_VOLUME = "/tmp";

    /**
     * The container's only process besides {@code --init}: it sleeps until stopped. {@code wait}
     * (unlike a foreground {@code sleep}) lets the TERM trap run at once on {@code docker stop}.
     */
    static final String KEEPALIVE = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done";

    /**
     * The leased container's only process besides {@code --init}: it reads the container's stdin
     * (through fd 3: a background job's own stdin is /dev/null) until it ends, which is when the
     * environment's attach connection closes, cleanly or because its JVM died. Then the container
     * stops and, being auto-removed, is gone.
     */
    static final String LEASED_KEEPALIVE = "trap 'exit 0' TERM INT; exec 3<&0; cat <&3 >/dev/null & wait $!";

    /**
     * Capabilities kept after dropping all: only what file ownership needs for a root user. CHOWN
     * (chown, tar keeping owners), DAC_OVERRIDE (root writing files it does not own or that are
     * read-only), FOWNER (chmod and utime on others' files), FSETID (setgid bits survive a write).
     * No SETUID/SETGID: nothing here switches users, and no-new-privileges makes su/sudo useless.
     * No KILL: every exec runs as the container's one user, so killing its own processes needs none.
     */
    static final Capability[] CAPS_KEPT = {Capability.CHOWN, Capability.DAC_OVERRIDE, Capability.FOWNER, Capability.FSETID};

    private static final Pattern API_MESSAGE = Pattern.compile("\"message\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");

    private final URI host;
    private final HijackedExec.Daemon address;
    private final Optional<DockerTls> tls;
    private final DockerSettings settings;
    /** How long a credential helper may take (one may ask a keychain or a cloud's metadata service). */
    private static final Duration HELPER_TIMEOUT = Duration.ofSeconds(30);
    private final Duration apiTimeout;
    private final DockerClient client;
    /** For an {@code ssh://} host, what the client connects through; else null. */
    private final SshDialer dialer;

    /** The state of one exec: whether it runs, and its exit code once it does not. */
    record ExecState(boolean running, Long exitCode) {
    }

    DockerDaemon(DockerSettings s) {
        this.host = s.host();
        this.apiTimeout = s.apiTimeout();
        this.tls = s.tls();
        this.settings = s;
        Optional<SSLContext> context = tls.map(DockerTls::context);
        this.dialer = "ssh".equals(host.getScheme()) ? SshDialer.start(host, s.sshConfig(), apiTimeout) : null;
        URI reach = dialer == null ? host : dialer.localAddress();
        this.address = new HijackedExec.Daemon(reach, context);
        DockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder()
                .withDockerHost(reach.toString())
                .withDockerConfig(s.dockerConfig().toString()) // registry credentials of config.json's auths
                .withDockerTlsVerify(false) // TLS is decided by DockerSettings, not by docker-java reading the variables again
                .build();
        // responseTimeout bounds every call on this client; no command's output streams through it
        // (execs use HijackedExec), so it never cuts a long command short.
        ApacheDockerHttpClient http = new ApacheDockerHttpClient.Builder()
                .dockerHost(config.getDockerHost())
                .sslConfig(context.<SSLConfig>map(c -> () -> c).orElse(null))
                .maxConnections(32)
                .connectionTimeout(Duration.ofSeconds(10))
                .responseTimeout(apiTimeout)
                .build();
        this.client = DockerClientImpl.getInstance(config, http);
    }

    URI host() {
        return host;
    }

    /** Where {@link HijackedExec} connects: the host and its TLS, if any. */
    HijackedExec.Daemon address() {
        return address;
    }

    Duration apiTimeout() {
        return apiTimeout;
    }

    /** The daemon's version, or an exception saying why it cannot be reached. */
    String ping() {
        return call("check that it answers", () -> {
            client.pingCmd().exec();
            return client.versionCmd().exec().getVersion();
        });
    }

    // ---------------------------------------------------------------- containers

    /** Labels for a container this process creates: the common scheme, plus the environment's id. */
    static Map<String, String> labels(DockerSettings s, String environmentId, boolean keep) {
        Map<String, String> l = new LinkedHashMap<>(s.labels()); // the user's first: Airlock's own win
        l.putAll(ResourceLabels.now(keep).asMap(LABEL_PREFIX));
        l.put(LABEL_ENVIRONMENT, environmentId);
        return l;
    }

    /**
     * A started container and its lease (null for a kept one): closing the lease ends the container.
     * {@code verified}: under an allowlist, what {@link NamespaceFirewall#verify} found unreachable; else null.
     */
    record Started(String id, HijackedExec lease, String verified) {
    }

    /**
     * Creates and starts the hardened keepalive container; removed again if it cannot start. A
     * leased container lives as long as its lease, the stdin attach made before it starts: when
     * this JVM dies, even by SIGKILL, the connection ends, the keepalive reads end-of-input and
     * the container stops and is removed. {@code airlock up} containers are not leased.
     */
    Started createAndStart(DockerSettings s, String name, Map<String, String> labels, boolean leased) {
        return createAndStart(s, name, labels, leased, Optional.empty());
    }

    /**
     * {@link #createAndStart(DockerSettings, String, Map, boolean)}, with {@code airlock.network=allowlist}'s
     * plan: its host names in {@code /etc/hosts}, and its rules written into the container's network
     * namespace after the start, before anything else runs there (the container is removed if they cannot be).
     */
    Started createAndStart(DockerSettings s, String name, Map<String, String> labels, boolean leased,
                           Optional<NamespaceFirewall.Plan> allowlist) {
        String image = s.requireImage();
        if (s.snapshot().isPresent()) {
            requireSnapshot(image);
        }
        // An image is not inspected first: the create says whether it is here (as docker run's
        // does), and only then is it looked up and pulled. One API round trip less at each open.
        HostConfig hc = HostConfig.newHostConfig()
                .withInit(true)
                .withCapDrop(Capability.ALL)
                .withCapAdd(CAPS_KEPT)
                .withSecurityOpts(List.of("no-new-privileges"))
                .withPidsLimit(s.pidsLimit())
                .withNetworkMode(s.network())
                .withAutoRemove(leased);
        s.cpus().ifPresent(c -> hc.withNanoCPUs(Math.round(c * 1e9)));
        if (s.memory().isPresent()) {
            hc.withMemory(s.memory().getAsLong()).withMemorySwap(s.memory().getAsLong());
        }
        if (!s.volumes().isEmpty()) {
            List<Bind> binds = new ArrayList<>();
            for (String v : s.volumes()) {
                binds.add(Bind.parse(v));
            }
            hc.withBinds(binds);
        }
        s.runtime().ifPresent(hc::withRuntime);
        allowlist.filter(p -> !p.extraHosts().isEmpty()).ifPresent(p -> hc.withExtraHosts(p.extraHosts().toArray(String[]::new)));
        CreateContainerCmd cmd = client.createContainerCmd(image)
                .withName(name)
                .withEntrypoint("sh", "-c", leased ? LEASED_KEEPALIVE : KEEPALIVE)
                .withLabels(labels)
                .withTty(false)
                .withStdinOpen(leased)
                .withStdInOnce(leased)
                .withAttachStdin(leased)
                .withHostConfig(hc);
        if (!s.env().isEmpty()) {
            List<String> env = new ArrayList<>();
            s.env().forEach((k, v) -> env.add(k + "=" + v));
            cmd.withEnv(env);
        }
        if (!s.ports().isEmpty()) {
            // Published on this host's loopback only, each on a port the daemon picks (never a
            // fixed one that another sandbox could hold); the forwarder reads it back from inspect.
            com.github.dockerjava.api.model.Ports bindings = new com.github.dockerjava.api.model.Ports();
            List<com.github.dockerjava.api.model.ExposedPort> exposed = new ArrayList<>();
            for (int p : s.ports()) {
                com.github.dockerjava.api.model.ExposedPort e = com.github.dockerjava.api.model.ExposedPort.tcp(p);
                exposed.add(e);
                bindings.bind(e, com.github.dockerjava.api.model.Ports.Binding.bindIp("127.0.0.1"));
            }
            cmd.withExposedPorts(exposed);
            hc.withPortBindings(bindings);
        }
        s.user().ifPresent(cmd::withUser);
        s.workdir().ifPresent(cmd::withWorkingDir);
        s.hardening().apply(hc, cmd);
        if (!s.hardening().tmpfs().containsKey(PRIVATE_VOLUME)
                && s.volumes().stream().noneMatch(v -> PRIVATE_VOLUME.equals(Bind.parse(v).getVolume().getPath()))) {
            cmd.withVolumes(new Volume(PRIVATE_VOLUME));
        }
        String id = createPullingIfMissing(s, image, cmd);
        HijackedExec lease = null;
        try {
            if (leased) {
                try {
                    lease = HijackedExec.attachStdin(address, id, apiTimeout);
                } catch (IOException e) {
                    throw new BackendUnavailableException("cannot attach to the new container " + shortId(id)
                            + " at " + host + ": " + e.getMessage() + "; start dockerd or set " + DockerSettings.HOST);
                }
            }
            call("start container " + shortId(id), () -> {
                client.startContainerCmd(id).exec();
                return null;
            });
        } catch (RuntimeException e) {
            remove(id);
            if (lease != null) {
                lease.close();
            }
            throw e instanceof BackendException b ? blamed(s, b) : e;
        }
        if (allowlist.isEmpty()) {
            return new Started(id, lease, null);
        }
        try {
            InspectContainerResponse r = inspect(id);
            String runtime = r.getHostConfig() == null ? null : r.getHostConfig().getRuntime();
            if (runtime == null || !NamespaceFirewall.KERNEL_NETWORK_RUNTIMES.contains(runtime)) {
                // The daemon's default runtime may be another (gVisor, Kata): their own network stack sends past the rules.
                throw new BackendException("airlock.network=allowlist: container " + shortId(id) + " runs on the "
                        + runtime + " runtime, whose own network stack sends past the host's packet filter; make runc the"
                        + " daemon's default runtime (or use airlock.network=off); the container was removed");
            }
            long pid = r.getState() == null || r.getState().getPidLong() == null ? 0 : r.getState().getPidLong();
            if (pid <= 0) {
                InspectContainerResponse.ContainerState st = r.getState();
                throw new BackendException("the docker container " + shortId(id) + " stopped as it started"
                        + (st == null ? "" : " (" + st.getStatus() + (st.getExitCodeLong() == null ? "" : ", exit code "
                        + st.getExitCodeLong()) + (st.getError() == null || st.getError().isEmpty() ? "" : ": " + oneLine(st.getError())) + ")")
                        + ", so airlock.network=allowlist's rules were not written; the container was removed");
            }
            NamespaceFirewall.enforce(allowlist.get(), pid, id);
            String gateway = r.getNetworkSettings() == null || r.getNetworkSettings().getNetworks() == null
                    || r.getNetworkSettings().getNetworks().get("bridge") == null ? null
                    : r.getNetworkSettings().getNetworks().get("bridge").getGateway();
            return new Started(id, lease, NamespaceFirewall.verify(allowlist.get(), pid, gateway, id).orElse(null));
        } catch (RuntimeException e) {
            try {
                remove(id); // its network was never filtered: nothing may run in it
            } catch (RuntimeException notRemoved) {
                e.addSuppressed(notRemoved);
            }
            if (lease != null) {
                lease.close();
            }
            throw e;
        }
    }

    /** The create; when the daemon answers 404, the image is looked up (and pulled, if allowed) and the create sent once more. */
    private String createPullingIfMissing(DockerSettings s, String image, CreateContainerCmd cmd) {
        try {
            return create(s, image, cmd);
        } catch (NotFoundException e) {
            if (s.snapshot().isPresent()) {
                throw notFound(s, image, e);
            }
        }
        ensureImage(image, s.pullMissing()); // the image may be what is missing: found, pulled, or one line
        try {
            return create(s, image, cmd);
        } catch (NotFoundException again) {
            throw notFound(s, image, again);
        }
    }

    /** The create call; a daemon refusal blamed on the setting that caused it. */
    private String create(DockerSettings s, String image, CreateContainerCmd cmd) {
        try {
            return call("create a container from " + image, () -> cmd.exec().getId());
        } catch (BackendException e) {
            throw blamed(s, e);
        }
    }

    /** A create the daemon answered 404 with the image there: a hardening setting it refused, or the image after all. */
    private ConfigurationException notFound(DockerSettings s, String image, NotFoundException e) {
        String why = reason(e);
        Optional<String> blamed = s.hardening().blame(why);
        if (blamed.isPresent()) {
            return new ConfigurationException("the Docker daemon refused " + blamed.get() + ": " + oneLine(why));
        }
        return new ConfigurationException("image " + image + " is not on the Docker host (" + DockerSettings.IMAGE
                + "): docker pull or build it, or set " + DockerSettings.PULL + "=missing");
    }

    /** A snapshot to start from must be on this daemon: it is never pulled. */
    private void requireSnapshot(String imageId) {
        try {
            call("inspect snapshot " + imageId, () -> client.inspectImageCmd(imageId).exec());
        } catch (NotFoundException e) {
            throw new ConfigurationException("no snapshot " + imageId + " on the Docker host at " + host + " ("
                    + DockerSettings.SNAPSHOT + "): take one with airlock snapshot, or check that airlock gc did not remove it");
        }
    }

    // ---------------------------------------------------------------- snapshots

    /**
     * {@code POST /commit} of the container, paused while it is copied, to an untagged image with
     * {@code labels}; returns the image id. Volumes and tmpfs mounts are not in it (Docker's rule).
     */
    String commit(String containerId, Map<String, String> labels) {
        try {
            return call("commit container " + shortId(containerId), () -> client.commitCmd(containerId)
                    .withLabels(labels).withPause(true).exec());
        } catch (NotFoundException | ConflictException e) {
            throw containerLost(containerId, "so no snapshot was taken");
        }
    }

    /**
     * The snapshot images gc may remove: Airlock's labels say this owner's, older than {@code olderThan}
     * and not held by a process that still runs (as for containers), and no container (running or
     * not) was made from it. Images without Airlock's labels are never listed.
     */
    List<String> collectableSnapshots(Duration olderThan, boolean includeKept) {
        List<Image> images = call("list images", () -> client.listImagesCmd()
                .withLabelFilter(ResourceLabels.selector(LABEL_PREFIX)).exec());
        Set<String> used = new HashSet<>();
        for (Container c : call("list containers", () -> client.listContainersCmd().withShowAll(true).exec())) {
            used.add(c.getImageId());
        }
        String owner = ResourceLabels.currentOwner();
        Instant now = Instant.now();
        List<String> out = new ArrayList<>();
        for (Image i : images) {
            Map<String, String> l = i.getLabels() == null ? Map.of() : i.getLabels();
            if (l.containsKey(LABEL_SNAPSHOT_OF) && !used.contains(i.getId()) && ResourceLabels.parse(l, LABEL_PREFIX)
                    .filter(r -> r.collectable(owner, now, olderThan, includeKept)).isPresent()) {
                out.add(i.getId());
            }
        }
        return out;
    }

    /** Removes an image unless a container uses it (the daemon refuses then: no force); true when removed or gone. */
    boolean removeImage(String imageId) {
        try {
            call("remove image " + imageId, () -> {
                client.removeImageCmd(imageId).withForce(false).exec();
                return null;
            });
            return true;
        } catch (NotFoundException e) {
            return true;
        } catch (ConflictException e) {
            LOG.debug("image {} is in use: {}", imageId, reason(e));
            return false;
        }
    }

    /** A refusal caused by one of the hardening settings names that setting (a configuration error); others pass. */
    private static RuntimeException blamed(DockerSettings s, BackendException e) {
        Optional<String> setting = s.hardening().blame(e.getMessage());
        if (setting.isEmpty()) {
            return e;
        }
        return new ConfigurationException("the Docker daemon refused " + setting.get() + ": "
                + oneLine(e.getMessage().replaceFirst("^the Docker daemon could not [^:]*: ", "")));
    }

    private void ensureImage(String image, boolean pullMissing) {
        try {
            call("inspect image " + image, () -> client.inspectImageCmd(image).exec());
            return;
        } catch (NotFoundException e) {
            if (!pullMissing) {
                throw new ConfigurationException("image " + image + " is not on the Docker host (" + DockerSettings.IMAGE
                        + ") and " + DockerSettings.PULL + "=never: docker pull or build it first");
            }
        }
        LOG.info("pulling image {}", image);
        // The Docker CLI's credential helpers; docker-java itself reads config.json's plain auths.
        Optional<AuthConfig> auth = CredentialHelpers.lookup(settings.dockerConfig(), settings.searchPath(), image, HELPER_TIMEOUT);
        String failure = ImagePull.pull(client, image, apiTimeout, auth);
        if (failure != null) {
            throw pullFailed(image, failure);
        }
    }

    /**
     * Why the daemon's words say a pull failed, named by image and registry: the network between
     * the Docker host and the registry (a timeout, a refused connection, a name that does not
     * resolve) is the registry being unavailable, not a usage error; anything else (no such image
     * or tag, access denied) is the image setting's to fix.
     */
    static RuntimeException pullFailed(String image, String failure) {
        String registry = CredentialHelpers.registry(image);
        if (NETWORK_FAILURE.matcher(failure).find()) {
            return new BackendUnavailableException("image " + image + " is not on the Docker host and pulling it failed: the registry "
                    + registry + " could not be reached (" + oneLine(failure) + "); check the network (and any proxy) between"
                    + " the Docker host and " + registry + ", then try again");
        }
        return new ConfigurationException("image " + image + " is not on the Docker host and pulling it failed: " + oneLine(failure)
                + " (registry " + registry + "); docker pull or build it, or fix " + DockerSettings.IMAGE);
    }

    /** The daemon's (Go's net/http) and the JVM's words for a network that did not carry the pull. */
    private static final Pattern NETWORK_FAILURE = Pattern.compile("(?i)dial tcp|i/o timeout|no such host|connection refused"
            + "|connection reset|network is unreachable|no route to host|TLS handshake timeout|timeout awaiting response headers"
            + "|Client\\.Timeout exceeded|request canceled|server misbehaving|temporary failure in name resolution"
            + "|Connect(ion)? timed out|UnknownHostException|unexpected EOF");

    /** A daemon message on one line. */
    static String oneLine(String s) {
        String t = s == null ? "" : s.strip().replaceAll("\\s*[\\r\\n]+\\s*", " ");
        return t.length() > 500 ? t.substring(0, 500) + "..." : t;
    }

    /** Inspects a container to attach to: it must exist and run. */
    InspectContainerResponse requireRunning(String idOrName) {
        InspectContainerResponse r;
        try {
            r = call("inspect container " + idOrName, () -> client.inspectContainerCmd(idOrName).exec());
        } catch (NotFoundException e) {
            throw new ConfigurationException("no container '" + idOrName + "' on the Docker host (" + DockerSettings.CONTAINER
                    + "); list them with docker ps, or create one with airlock up");
        }
        if (r.getState() == null || !Boolean.TRUE.equals(r.getState().getRunning()) || Boolean.TRUE.equals(r.getState().getPaused())) {
            throw new BackendUnavailableException("container '" + idOrName + "' is not running ("
                    + (r.getState() == null ? "unknown state" : r.getState().getStatus()) + "); start it with docker start, or set "
                    + DockerSettings.CONTAINER + " to a running one");
        }
        return r;
    }

    /**
     * Whether a command killed by a signal died because its container is going: removed, being
     * removed, or stopped. The daemon records the container's end just after its processes die,
     * so a running container is asked again for a moment before the signal is taken as the command's own.
     */
    boolean diedWithContainer(String containerId) throws InterruptedException {
        for (int i = 0; i < 6; i++) {
            if (!runs(containerId)) {
                return true;
            }
            Thread.sleep(50);
        }
        return false;
    }

    /** The labels of a container, or null when there is none with this id or name. */
    Map<String, String> labelsOf(String idOrName) {
        try {
            InspectContainerResponse r = call("inspect container " + idOrName, () -> client.inspectContainerCmd(idOrName).exec());
            return r.getConfig() == null || r.getConfig().getLabels() == null ? Map.of() : r.getConfig().getLabels();
        } catch (NotFoundException e) {
            return null;
        }
    }

    /**
     * Where {@code port}/tcp of the container is published on the daemon's host: {@code host:port},
     * or empty when the container does not publish it. {@code published} gets every published port.
     */
    Optional<String> publishedAt(String containerId, int port, java.util.SortedSet<Integer> published) {
        InspectContainerResponse r = inspect(containerId);
        if (r.getNetworkSettings() == null || r.getNetworkSettings().getPorts() == null) {
            return Optional.empty();
        }
        Optional<String> found = Optional.empty();
        for (Map.Entry<com.github.dockerjava.api.model.ExposedPort, com.github.dockerjava.api.model.Ports.Binding[]> e
                : r.getNetworkSettings().getPorts().getBindings().entrySet()) {
            if (e.getValue() == null || e.getValue().length == 0
                    || e.getKey().getProtocol() != com.github.dockerjava.api.model.InternetProtocol.TCP) {
                continue;
            }
            published.add(e.getKey().getPort());
            if (e.getKey().getPort() == port && found.isEmpty()) {
                for (com.github.dockerjava.api.model.Ports.Binding b : e.getValue()) {
                    String ip = b.getHostIp() == null || b.getHostIp().isEmpty() || b.getHostIp().equals("0.0.0.0")
                            ? "127.0.0.1" : b.getHostIp();
                    if (ip.contains(":")) {
                        continue; // an IPv6 twin of the IPv4 binding
                    }
                    found = Optional.of(ip + ":" + b.getHostPortSpec());
                    break;
                }
            }
        }
        return found;
    }

    /** Inspects a container this environment uses. */
    InspectContainerResponse inspect(String containerId) {
        try {
            return call("inspect container " + shortId(containerId), () -> client.inspectContainerCmd(containerId).exec());
        } catch (NotFoundException e) {
            throw containerLost(containerId, "so its files cannot be written");
        }
    }

    /**
     * Unpacks {@code tar} into the directory {@code dir} of the container ({@code PUT
     * /containers/ID/archive}), streamed; an existing directory is never replaced by a file.
     */
    void putArchive(String containerId, String dir, java.io.InputStream tar) {
        try {
            call("write a file into container " + shortId(containerId), () -> {
                client.copyArchiveToContainerCmd(containerId).withRemotePath(dir).withTarInputStream(tar)
                        .withNoOverwriteDirNonDir(true).exec();
                return null;
            });
        } catch (NotFoundException e) {
            // 404 is both "no such container" and "no such directory": a directory removed by a
            // command between the write's place script and this upload is a failed write, not a
            // lost container.
            if (runs(containerId)) {
                throw new NoSuchPathException(dir);
            }
            throw containerLost(containerId, "so the file was not written");
        } catch (ConflictException e) {
            throw containerLost(containerId, "so the file was not written");
        }
    }

    /** Whether the container exists, runs and is not being removed. */
    private boolean runs(String containerId) {
        try {
            InspectContainerResponse.ContainerState st = call("inspect container " + shortId(containerId),
                    () -> client.inspectContainerCmd(containerId).exec()).getState();
            return st != null && Boolean.TRUE.equals(st.getRunning()) && !"removing".equals(st.getStatus());
        } catch (NotFoundException e) {
            return false;
        }
    }

    /** Removes a container with force; a container already gone (or being removed) is fine. */
    void remove(String containerId) {
        try {
            call("remove container " + shortId(containerId), () -> {
                client.removeContainerCmd(containerId).withForce(true).withRemoveVolumes(true).exec();
                return null;
            });
        } catch (NotFoundException e) {
            LOG.debug("container {} was already gone", shortId(containerId));
        } catch (ConflictException e) {
            LOG.debug("container {} is already being removed: {}", shortId(containerId), reason(e));
        }
    }

    /**
     * This owner's Airlock containers (by label: user and host, filtered by the daemon too) that
     * gc may remove: created more than {@code olderThan} ago, kept ones only when asked. Another
     * user's sandboxes on a shared daemon are never listed; nor are containers with damaged labels,
     * nor one whose holder still runs on this machine (an environment open longer than asked, or an
     * exec running right now), whatever its age.
     */
    List<Container> collectable(Duration olderThan, boolean includeKept) {
        List<Container> all = call("list containers", () -> client.listContainersCmd().withShowAll(true)
                .withLabelFilter(ResourceLabels.selector(LABEL_PREFIX)).exec());
        String owner = ResourceLabels.currentOwner();
        Instant now = Instant.now();
        List<Container> out = new ArrayList<>();
        for (Container c : all) {
            Map<String, String> l = c.getLabels() == null ? Map.of() : c.getLabels();
            if (ResourceLabels.parse(l, LABEL_PREFIX).filter(r -> r.collectable(owner, now, olderThan, includeKept)).isPresent()) {
                out.add(c);
            }
        }
        return out;
    }

    // ---------------------------------------------------------------- execs

    /** Creates an exec (not started); a container that is gone or stopped is reported once, clearly. */
    String createExec(String containerId, List<String> argv, Map<String, String> env, boolean attachStdin) {
        List<String> envList = new ArrayList<>();
        env.forEach((k, v) -> envList.add(k + "=" + v));
        try {
            return call("create an exec in container " + shortId(containerId), () -> client.execCreateCmd(containerId)
                    .withCmd(argv.toArray(String[]::new))
                    .withEnv(envList)
                    .withAttachStdin(attachStdin)
                    .withAttachStdout(true)
                    .withAttachStderr(true)
                    .withTty(false)
                    .exec().getId());
        } catch (NotFoundException | ConflictException e) {
            throw containerLost(containerId, "so the command did not run");
        }
    }

    /** The exec's state, or null when the daemon no longer knows it (its container was removed). */
    ExecState inspectExec(String execId) {
        try {
            InspectExecResponse r = call("inspect an exec", () -> client.inspectExecCmd(execId).exec());
            return new ExecState(Boolean.TRUE.equals(r.isRunning()), r.getExitCodeLong());
        } catch (NotFoundException e) {
            return null;
        }
    }

    /** The one error for a container that vanished: what happened and what to do; never retried. */
    BackendUnavailableException containerLost(String containerId, String when) {
        String state;
        try {
            InspectContainerResponse r = call("inspect container " + shortId(containerId), () -> client.inspectContainerCmd(containerId).exec());
            InspectContainerResponse.ContainerState st = r.getState();
            state = st == null ? "is in an unknown state"
                    : "removing".equals(st.getStatus()) ? "was removed"
                    : Boolean.TRUE.equals(st.getRunning()) && !Boolean.TRUE.equals(st.getPaused()) ? "lost the command's exec"
                    : "is " + st.getStatus() + (st.getExitCodeLong() != null ? " (exit code " + st.getExitCodeLong() + ")" : "");
        } catch (NotFoundException e) {
            state = "was removed";
        } catch (RuntimeException e) {
            state = "cannot be inspected (" + e.getMessage() + ")";
        }
        return new BackendUnavailableException("the docker container " + shortId(containerId) + " " + state + " " + when
                + "; nothing was retried: open a new environment");
    }

    // ---------------------------------------------------------------- plumbing

    /**
     * Runs one API call. {@link NotFoundException} and {@link ConflictException} pass through for
     * the caller to explain; other API errors become {@link BackendException}, and transport
     * failures {@link BackendUnavailableException}, each naming what was being done.
     */
    private <T> T call(String what, Supplier<T> call) {
        try {
            return call.get();
        } catch (NotFoundException | ConflictException e) {
            throw e;
        } catch (DockerException e) {
            throw new BackendException("the Docker daemon could not " + what + ": " + reason(e));
        } catch (RuntimeException e) {
            throw new BackendUnavailableException("cannot reach the Docker daemon at " + host + " to " + what + ": "
                    + rootMessage(e) + "; " + advice(e));
        }
    }

    /** What to check when the daemon cannot be reached: TLS material, TLS itself, or the daemon and its address. */
    private String advice(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof javax.net.ssl.SSLException && tls.isPresent()) {
                return "check that " + tls.get().certPath() + " (" + tls.get().origin() + ") holds the CA that signed the"
                        + " daemon's certificate and a client certificate the daemon trusts";
            }
        }
        if ("ssh".equals(host.getScheme())) {
            return "check that the docker CLI runs for that user on " + host.getHost()
                    + " and reaches its daemon (Airlock connects through 'docker system dial-stdio' there)";
        }
        if ("tcp".equals(host.getScheme()) && tls.isEmpty()) {
            return "start dockerd, set " + DockerSettings.HOST + ", or set " + DockerSettings.TLS_VERIFY
                    + "=true (or DOCKER_TLS_VERIFY=1) if the daemon speaks TLS";
        }
        return "start dockerd or set " + DockerSettings.HOST;
    }

    /** The daemon's own message from an API error, without docker-java's status prefix. */
    static String reason(DockerException e) {
        String m = String.valueOf(e.getMessage());
        Matcher matcher = API_MESSAGE.matcher(m);
        return matcher.find() ? matcher.group(1).replace("\\\"", "\"") : m.strip();
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }

    static String shortId(String id) {
        return id.length() > 12 && id.matches("[0-9a-f]+") ? id.substring(0, 12) : id;
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (IOException e) {
            LOG.debug("closing the docker client: {}", e.getMessage());
        } finally {
            if (dialer != null) {
                dialer.close();
            }
        }
    }
}
