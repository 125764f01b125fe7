package dev.airlock.docker;

import dev.airlock.Capabilities;
import dev.airlock.shell.Shell;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.AbstractEnvironment;
import dev.airlock.spi.ControlShell;
import dev.airlock.spi.Launch;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.RemoteProcess;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commands in one long-lived Docker container: created hardened on open (or attached with
 * {@code airlock.docker.container}), removed once on close unless attached. Each command is an
 * exec of the command's shell itself (no wrapper) started over a hijacked connection ({@link HijackedExec}): stdin
 * streams with a real end-of-input (PIPE mode), the environment travels in the exec's API call
 * (never argv), and the core's process-group kill stops a command's whole tree. Files go through
 * the core's shell implementation over that same pipe (byte-exact and streamed both ways, atomic
 * writes with modes). With {@code airlock.docker.files=archive}, {@code DockerFiles} sends writes
 * through the archive API where the daemon writes what commands see (the root filesystem, its own
 * volumes and binds; never a tmpfs or a read-only root), the shell path elsewhere. Those are this
 * backend's native files, so the core's guard applies the same write rules before either route,
 * and the archive route keeps the shell write's steps: a temp sibling, the mode, the exec user as
 * owner, the size checked, a rename. Not the default: measured, it is not faster (docs/backends.md, Docker).
 */
public final class DockerEnvironment extends AbstractEnvironment {
    private static final Logger LOG = LoggerFactory.getLogger(DockerEnvironment.class);
    /** The control shell's builtins and /proc scan answer in milliseconds; past this it is taken for gone. */
    private static final Duration CONTROL_ANSWER = Duration.ofMillis(500);
    private final DockerSettings docker;
    private final DockerDaemon daemon;
    private final boolean attached;
    private final Capabilities capabilities;
    private volatile String containerId;
    private volatile HijackedExec lease;
    /** The core's shell files, taken before {@link #nativeFiles()} has anything: the archive route falls back on them. */
    private final dev.airlock.RemoteFiles shellFiles;
    private volatile DockerFiles files;

    private DockerEnvironment(OpenContext context, DockerSettings docker, DockerDaemon daemon) {
        super("docker", "docker-" + StdinScripts.randomToken().substring(0, 12), context);
        this.docker = docker;
        this.daemon = daemon;
        this.attached = docker.container().isPresent();
        this.capabilities = Capabilities.pipe()
                .withNativeEnv(true)
                .withAttachable(true)
                .withDisposable(!attached && docker.volumes().isEmpty())
                .withArgvLimit(96 * 1024);
        this.shellFiles = super.files();
    }

    static DockerEnvironment open(OpenContext context, DockerSettings docker) {
        DockerDaemon daemon = new DockerDaemon(docker);
        DockerEnvironment env;
        try {
            env = new DockerEnvironment(context, docker, daemon);
        } catch (RuntimeException e) {
            daemon.close();
            throw e;
        }
        try {
            if (env.attached) {
                env.containerId = daemon.requireRunning(docker.container().get()).getId();
            } else {
                DockerDaemon.Started started = daemon.createAndStart(docker, "airlock-" + env.id().substring("docker-".length()),
                        DockerDaemon.labels(docker, env.id(), false), true);
                env.containerId = started.id();
                env.lease = started.lease();
            }
            ArchiveMounts mounts = docker.archiveWrites() ? ArchiveMounts.of(daemon.inspect(env.containerId)) : ArchiveMounts.NONE;
            String cid = env.containerId;
            env.initialize();
            env.files = new DockerFiles(env.shellFiles, script -> env.runRaw(script, null), (dir, tar) -> daemon.putArchive(cid, dir, tar),
                    path -> env.target().expand(path), mounts);
            env.useControlShell(env.startControl());
        } catch (RuntimeException e) {
            env.close();
            throw e;
        }
        return env;
    }

    /** The id of the container commands run in. */
    public String containerId() {
        return containerId;
    }

    /** Whether this environment attached to an existing container (which it never removes). */
    public boolean isAttached() {
        return attached;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    /** Writes through the archive API where it lands where commands look, the shell path elsewhere. */
    @Override
    protected java.util.Optional<dev.airlock.RemoteFiles> nativeFiles() {
        return java.util.Optional.ofNullable(files);
    }

    /** How many writes took the archive route (for tests and the benchmark). */
    long archiveWrites() {
        DockerFiles f = files;
        return f == null ? 0 : f.archiveWrites();
    }

    @Override
    protected RemoteProcess launch(Launch launch) throws IOException {
        String cid = containerId;
        if (cid == null) {
            throw new IOException("the container was not created");
        }
        List<String> argv = DockerProcess.argv(launch.shell(), launch.script());
        String execId = daemon.createExec(cid, argv, launch.env(), launch.pipeStdin());
        try {
            return DockerProcess.start(daemon, cid, execId, docker.apiTimeout());
        } catch (HijackedExec.ApiError e) {
            if (e.status == 404 || e.status == 409) {
                throw daemon.containerLost(cid, "so the command did not run");
            }
            throw e;
        }
    }

    /**
     * Docker has no exec kill: the core's process-group kill (through the control shell while it
     * lives), noted so the signal exit is not blamed on the container.
     */
    @Override
    protected void kill(RemoteProcess process, java.util.OptionalLong group, boolean force) throws IOException {
        if (process instanceof DockerProcess p) {
            p.markKilled();
        }
        super.kill(process, group, force);
    }

    /** The control shell, or null (then every group read and signal is an exec of its own). */
    private ControlShell startControl() {
        try {
            String execId = daemon.createExec(containerId, DockerProcess.argv("sh", ControlShell.LOOP), Map.of(), true);
            return ControlShell.start(DockerProcess.start(daemon, containerId, execId, docker.apiTimeout()), execId.substring(0, 12),
                    CONTROL_ANSWER, docker.apiTimeout());
        } catch (IOException | RuntimeException e) {
            LOG.debug("no control shell in container {}: {}", DockerDaemon.shortId(containerId), e.getMessage());
            return null;
        }
    }

    /** The container never sees the JVM's environment, so there is nothing of it to strip. */
    @Override
    protected Set<String> childUnset() {
        return Set.of();
    }

    /**
     * Runs once (the core's stop-once latch): removes the container unless attached, then ends its
     * lease (which alone would end the container too) and frees the client.
     */
    @Override
    protected void stopSandbox() {
        try {
            String cid = containerId;
            if (cid != null && !attached) {
                daemon.remove(cid);
            }
        } finally {
            HijackedExec l = lease;
            if (l != null) {
                l.close();
            }
            daemon.close();
        }
    }
}
