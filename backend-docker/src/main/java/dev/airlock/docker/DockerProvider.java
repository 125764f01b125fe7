package dev.airlock.docker;

import com.github.dockerjava.api.model.Container;
import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.DeniedException;
import dev.airlock.Environment;
import dev.airlock.settings.SettingKey;
import dev.airlock.settings.Settings;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.Availability;
import dev.airlock.spi.EnvironmentProvider;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.SandboxLifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The {@code docker} backend. Besides opening environments it manages containers that outlive a
 * command, for the CLI's {@code up}, {@code down ID} and {@code gc}.
 */
public final class DockerProvider implements EnvironmentProvider, SandboxLifecycle {
    /** Native variables a settings builder should map: {@code Settings.builder().nativeVariable(k, v)}. */
    public static final Map<String, String> NATIVE_VARIABLES = Map.of(DockerSettings.HOST, DockerSettings.DOCKER_HOST);

    @Override
    public String name() {
        return "docker";
    }

    @Override
    public List<SettingKey> settingKeys() {
        return List.of(
                SettingKey.of(DockerSettings.IMAGE, "string", "required unless container is set",
                        "image for the container; :latest when it has no tag or digest"),
                SettingKey.of(DockerSettings.HOST, "unix:///PATH, tcp://HOST[:PORT] or ssh://[USER@]HOST[:PORT]",
                        "DOCKER_HOST, else " + DockerSettings.DEFAULT_HOST, "the daemon"),
                SettingKey.of(DockerSettings.SSH_CONFIG, "file", "ssh's own", "OpenSSH config file for an ssh:// host (ssh -F)"),
                SettingKey.of(DockerSettings.TLS_VERIFY, "boolean", "DOCKER_TLS_VERIFY non-empty, or a context with TLS",
                        "verified TLS to a tcp:// daemon with a client certificate"),
                SettingKey.of(DockerSettings.CERT_PATH, "directory", "DOCKER_CERT_PATH, else the context's, else ~/.docker",
                        "where ca.pem, cert.pem and key.pem are"),
                SettingKey.of(DockerSettings.CONTAINER, "id or name", "", "attach to a running container; never removed on close"),
                SettingKey.of(DockerSettings.SNAPSHOT, "image id", "", "start the container from a snapshot (Environment.snapshot(), airlock snapshot) instead of the image"),
                SettingKey.of(DockerSettings.CPUS, "decimal", "unlimited", "like --cpus"),
                SettingKey.of(DockerSettings.MEMORY, "size", "unlimited", "memory limit, swap included"),
                SettingKey.of(DockerSettings.PIDS_LIMIT, "int", "512", "most processes in the container"),
                SettingKey.of(DockerSettings.NETWORK, "string", "none (bridge under airlock.network=on or allowlist)", "none, bridge or a network name; off (airlock.network) is none, allowlist takes bridge only"),
                SettingKey.of(DockerSettings.USER, "user[:group]", "the image's", "user for the container and its commands"),
                SettingKey.of(DockerSettings.WORKDIR, "path", "the image's", "working directory of the container"),
                SettingKey.of(DockerSettings.ENV + SettingKey.NAME, "string", "", "variables of the container"),
                SettingKey.of(DockerSettings.LABELS + SettingKey.NAME, "string", "", "your own labels on every container (dev.airlock.* is reserved)"),
                SettingKey.of(DockerSettings.VOLUMES, "list of HOST:CONTAINER[:ro]", "", "bind mounts"),
                SettingKey.of(DockerSettings.RUNTIME, "string", "the daemon's", "OCI runtime"),
                SettingKey.of(DockerSettings.PULL, "missing | never", "missing", "pull the image if the daemon lacks it"),
                SettingKey.of(DockerHardening.READ_ONLY, "boolean", "false", "read-only root filesystem (writable: the tmpfs mounts)"),
                SettingKey.of(DockerHardening.TMPFS, "list of PATH[:OPTIONS]", "/tmp when read-only", "tmpfs mounts, like --tmpfs"),
                SettingKey.of(DockerHardening.ULIMITS, "list of NAME=SOFT[:HARD]", "the daemon's", "like --ulimit (nofile, nproc...)"),
                SettingKey.of(DockerHardening.SHM_SIZE, "size", "64m (Docker's)", "size of /dev/shm"),
                SettingKey.of(DockerHardening.STORAGE_SIZE, "size", "", "writable layer quota (overlay2 on xfs with pquota)"),
                SettingKey.of(DockerHardening.DEVICES, "list of HOST[:CONTAINER[:rwm]]", "", "host devices, like --device"),
                SettingKey.of(DockerHardening.GPUS, "all or a count", "", "GPUs, like --gpus (NVIDIA container toolkit)"),
                SettingKey.of(DockerHardening.PLATFORM, "OS/ARCH[/VARIANT]", "the image's", "like --platform"),
                SettingKey.of(DockerSettings.API_TIMEOUT, "duration", "2m", "bound on one API call and an exec's start, never on a command"),
                SettingKey.of(DockerSettings.FILES, "shell | archive", "shell",
                        "archive: writes through the archive API where commands see them, else the shell path"));
    }

    /** Registry credentials a CI job may hold for the Docker CLI; no command needs them. */
    @Override
    public java.util.Set<String> secretVariables() {
        return java.util.Set.of("DOCKER_AUTH_CONFIG");
    }

    @Override
    public Availability check(Settings settings) {
        DockerSettings s;
        try {
            s = DockerSettings.from(settings, System.getenv());
        } catch (AirlockException e) {
            return Availability.unavailable(e.getMessage());
        }
        String version;
        try (DockerDaemon daemon = new DockerDaemon(s.withApiTimeout(Duration.ofSeconds(5)))) {
            version = daemon.ping();
        } catch (AirlockException e) {
            return Availability.unavailable(e.getMessage());
        }
        if (s.image().isEmpty() && s.container().isEmpty()) {
            return Availability.unavailable("the Docker daemon " + version + " at " + s.host() + " answers, but "
                    + DockerSettings.IMAGE + " is not set (or " + DockerSettings.CONTAINER + " to attach)");
        }
        return Availability.ok("Docker " + version + " at " + s.host()
                + s.container().map(c -> ", attaching to container " + c).orElse(", image " + s.image().orElse("")));
    }

    @Override
    public Environment open(OpenContext context) {
        DockerSettings s = DockerSettings.from(context.settings(), System.getenv());
        if (s.container().isEmpty()) {
            s.requireImage();
        }
        return DockerBackend.open(context, s);
    }

    /**
     * {@code airlock up}: creates and starts a container like an environment's, labelled to be
     * kept, and returns its id. Commands attach to it with {@code airlock.docker.container=ID};
     * it stays until {@link #down}.
     */
    @Override
    public String attachKey() {
        return DockerSettings.CONTAINER;
    }

    @Override
    public String up(Settings settings, Duration ttl) {
        DockerSettings s = DockerSettings.from(settings, System.getenv());
        String image = s.requireImage();
        try (DockerDaemon daemon = new DockerDaemon(s)) {
            String token = StdinScripts.randomToken().substring(0, 12);
            // Under an allowlist the kept container gets its rules too; they stay in its namespace until it is removed.
            return daemon.createAndStart(s, "airlock-up-" + token, DockerDaemon.labels(s, "up-" + token, true), false,
                    NamespaceFirewall.plan(settings, s)).id();
        } catch (RuntimeException e) {
            throw e instanceof AirlockException ? e : new dev.airlock.BackendException("airlock up with image " + image + " failed: " + e, e);
        }
    }

    /** A container lives until {@code airlock down ID}: Docker has no lifetime of its own to give it. */
    @Override
    public boolean expires() {
        return false;
    }

    /**
     * {@code airlock down ID}: removes a container Airlock created (by id or name). A container
     * without Airlock's label is refused; an unknown one is a {@link ConfigurationException}
     * naming it.
     */
    @Override
    public void down(Settings settings, String idOrName) {
        if (idOrName == null || idOrName.isBlank()) {
            throw new ConfigurationException("down needs the container id that airlock up printed");
        }
        DockerSettings s = DockerSettings.from(settings, System.getenv());
        try (DockerDaemon daemon = new DockerDaemon(s)) {
            Map<String, String> labels = daemon.labelsOf(idOrName);
            if (labels == null) {
                throw new ConfigurationException("no container '" + idOrName + "' on the Docker host at " + s.host());
            }
            if (!"true".equals(labels.get(DockerDaemon.LABEL_MANAGED))) {
                throw new DeniedException("container '" + idOrName + "' was not created by Airlock (no "
                        + DockerDaemon.LABEL_MANAGED + " label); remove it with docker rm if you mean to");
            }
            daemon.remove(idOrName);
        }
    }

    /**
     * {@code airlock gc [--older-than D]}: removes this owner's ({@code user@host}) Airlock
     * containers created more than {@code olderThan} ago, left behind by a process that died
     * before closing (a leased container ends with its JVM; an unstarted one can remain). Containers from
     * {@code up} are kept unless {@code includeKept}. Then this owner's snapshot images by the
     * same rule that no container was made from (never an image without Airlock's labels, nor one
     * a container uses).
     * Returns the ids removed.
     */
    @Override
    public List<String> gc(Settings settings, Duration olderThan, boolean includeKept) {
        if (olderThan.isNegative()) {
            throw new ConfigurationException("--older-than must not be negative");
        }
        DockerSettings s = DockerSettings.from(settings, System.getenv());
        List<String> removed = new ArrayList<>();
        try (DockerDaemon daemon = new DockerDaemon(s)) {
            for (Container c : daemon.collectable(olderThan, includeKept)) {
                daemon.remove(c.getId());
                removed.add(c.getId());
            }
            for (String image : daemon.collectableSnapshots(olderThan, includeKept)) {
                if (daemon.removeImage(image)) {
                    removed.add(image);
                }
            }
        }
        return removed;
    }
}
