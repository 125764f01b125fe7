package dev.airlock.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.command.InspectExecResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.PullResponseItem;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Docker API calls the backend makes, through docker-java, with its errors turned into
 * Airlock's: an unreachable daemon is {@link BackendUnavailableException}, a bad image or option
 * a {@link ConfigurationException}. Nothing here retries; the exec start itself goes through
 * {@link HijackedExec}.
 */
final class DockerDaemon implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(DockerDaemon.class);

    static final String LABEL_MANAGED = "dev.airlock.managed";
    static final String LABEL_OWNER = "dev.airlock.owner";
    static final String LABEL_CREATED = "dev.airlock.created";
    static final String LABEL_VERSION = "dev.airlock.version";
    static final String LABEL_ENVIRONMENT = "dev.airlock.environment";
    /** Set on containers made by {@code airlock up}: they outlive the command that made them. */
    static final String LABEL_KEEP = "dev.airlock.keep";

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
    private final Duration apiTimeout;
    private final DockerClient client;

    /** The state of one exec: whether it runs, and its exit code once it does not. */
    record ExecState(boolean running, Long exitCode) {
    }

    DockerDaemon(DockerSettings s) {
        this.host = s.host();
        this.apiTimeout = s.apiTimeout();
        DockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder()
                .withDockerHost(host.toString())
                .withDockerTlsVerify(false)
                .build();
        // responseTimeout bounds every call on this client; no command's output streams through it
        // (execs use HijackedExec), so it never cuts a long command short.
        ApacheDockerHttpClient http = new ApacheDockerHttpClient.Builder()
                .dockerHost(config.getDockerHost())
                .maxConnections(32)
                .connectionTimeout(Duration.ofSeconds(10))
                .responseTimeout(apiTimeout)
                .build();
        this.client = DockerClientImpl.getInstance(config, http);
    }

    URI host() {
        return host;
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

    /** Labels for a container this process creates. */
    static Map<String, String> labels(String environmentId, boolean keep) {
        Map<String, String> l = new LinkedHashMap<>();
        l.put(LABEL_MANAGED, "true");
        l.put(LABEL_OWNER, owner());
        l.put(LABEL_CREATED, Instant.now().toString());
        l.put(LABEL_VERSION, version());
        l.put(LABEL_ENVIRONMENT, environmentId);
        if (keep) {
            l.put(LABEL_KEEP, "true");
        }
        return l;
    }

    /** A started container and its lease (null for a kept one): closing the lease ends the container. */
    record Started(String id, HijackedExec lease) {
    }

    /**
     * Creates and starts the hardened keepalive container; removed again if it cannot start. A
     * leased container lives as long as its lease, the stdin attach made before it starts: when
     * this JVM dies, even by SIGKILL, the connection ends, the keepalive reads end-of-input and
     * the container stops and is removed. {@code airlock up} containers are not leased.
     */
    Started createAndStart(DockerSettings s, String name, Map<String, String> labels, boolean leased) {
        String image = s.requireImage();
        ensureImage(image, s.pullMissing());
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
        s.user().ifPresent(cmd::withUser);
        s.workdir().ifPresent(cmd::withWorkingDir);
        String id;
        try {
            id = call("create a container from " + image, () -> cmd.exec().getId());
        } catch (NotFoundException e) {
            throw new ConfigurationException("image " + image + " is not on the Docker host (" + DockerSettings.IMAGE
                    + "): docker pull or build it, or set " + DockerSettings.PULL + "=missing");
        }
        HijackedExec lease = null;
        try {
            if (leased) {
                try {
                    lease = HijackedExec.attachStdin(host, id, apiTimeout);
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
            throw e;
        }
        return new Started(id, lease);
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
        String[] ref = DockerSettings.splitReference(image);
        Pull pull = new Pull();
        String failure;
        try {
            client.pullImageCmd(ref[0]).withTag(ref[1]).exec(pull);
            if (!pull.awaitCompletion(Math.max(10, apiTimeout.toMinutes()), TimeUnit.MINUTES)) {
                closeQuietly(pull);
                throw new BackendException("pulling image " + image + " did not finish in time; pull it by hand (docker pull "
                        + image + ")");
            }
            failure = pull.failure();
        } catch (InterruptedException e) {
            closeQuietly(pull);
            Thread.currentThread().interrupt();
            throw new BackendException("interrupted while pulling image " + image);
        } catch (DockerException e) {
            failure = reason(e);
        } catch (RuntimeException e) {
            failure = rootMessage(e);
        }
        if (failure != null) {
            throw new ConfigurationException("image " + image + " is not on the Docker host and pulling it failed: "
                    + oneLine(failure) + "; docker pull or build it, or fix " + DockerSettings.IMAGE);
        }
    }

    /**
     * A pull's progress: keeps the daemon's error and the transport's, and logs nothing
     * (docker-java's own callback logs each failure with a stack trace; Airlock reports one line).
     */
    private static final class Pull extends ResultCallback.Adapter<PullResponseItem> {
        private volatile String error;
        private volatile Throwable failure;

        @Override
        public void onNext(PullResponseItem item) {
            if (item != null && item.isErrorIndicated() && error == null) {
                error = item.getErrorDetail() != null && item.getErrorDetail().getMessage() != null
                        ? item.getErrorDetail().getMessage() : item.getError();
            }
        }

        @Override
        public void onError(Throwable t) {
            if (failure == null) {
                failure = t;
            }
            closeQuietly(this);
        }

        /** What went wrong, or null when the image came. */
        String failure() {
            Throwable t = failure;
            if (t instanceof DockerException d) {
                return reason(d);
            }
            return t != null ? rootMessage(t) : error;
        }
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // nothing left to free
        }
    }

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
            InspectContainerResponse r;
            try {
                r = call("inspect container " + shortId(containerId), () -> client.inspectContainerCmd(containerId).exec());
            } catch (NotFoundException e) {
                return true;
            }
            InspectContainerResponse.ContainerState st = r.getState();
            if (st == null || !Boolean.TRUE.equals(st.getRunning()) || "removing".equals(st.getStatus())) {
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
     * This owner's Airlock containers (by label: user and host), optionally with the kept ones,
     * created before {@code cutoff}. Another user's sandboxes on a shared daemon are never listed.
     */
    List<Container> managedBefore(Instant cutoff, boolean includeKept) {
        List<Container> all = call("list containers", () -> client.listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of(LABEL_MANAGED, "true", LABEL_OWNER, owner())).exec());
        List<Container> out = new ArrayList<>();
        for (Container c : all) {
            Map<String, String> l = c.getLabels() == null ? Map.of() : c.getLabels();
            if ("true".equals(l.get(LABEL_KEEP)) && !includeKept) {
                continue;
            }
            if (created(c).isBefore(cutoff)) {
                out.add(c);
            }
        }
        return out;
    }

    private static Instant created(Container c) {
        String label = c.getLabels() == null ? null : c.getLabels().get(LABEL_CREATED);
        if (label != null) {
            try {
                return Instant.parse(label);
            } catch (DateTimeParseException ignored) {
                // fall back to the daemon's creation time
            }
        }
        return Instant.ofEpochSecond(c.getCreated() == null ? 0 : c.getCreated());
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
                    + rootMessage(e) + "; start dockerd or set " + DockerSettings.HOST);
        }
    }

    /** The daemon's own message from an API error, without docker-java's status prefix. */
    static String reason(DockerException e) {
        String m = String.valueOf(e.getMessage());
        Matcher matcher = API_MESSAGE.matcher(m);
        return matcher.find() ? matcher.group(1).replace("\\\"", "\"") : m.strip();
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }

    static String shortId(String id) {
        return id.length() > 12 && id.matches("[0-9a-f]+") ? id.substring(0, 12) : id;
    }

    /** Who made a container: {@code user@host}, the scope of {@code gc}. */
    static String owner() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = java.net.InetAddress.getLocalHost().getHostName();
            } catch (IOException e) {
                host = "unknown";
            }
        }
        return System.getProperty("user.name", "unknown") + "@" + host;
    }

    /** Airlock's version from the build, for the labels. */
    static String version() {
        try (InputStream in = DockerDaemon.class.getResourceAsStream("airlock-version.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                return p.getProperty("version", "unknown");
            }
        } catch (IOException ignored) {
            // fall through
        }
        return "unknown";
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (IOException e) {
            LOG.debug("closing the docker client: {}", e.getMessage());
        }
    }
}
