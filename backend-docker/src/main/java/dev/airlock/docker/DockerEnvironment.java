package dev.airlock.docker;

import dev.airlock.Capabilities;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.AbstractEnvironment;
import dev.airlock.spi.Launch;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.RemoteProcess;

import java.io.IOException;
import java.util.List;
import java.util.Set;

/**
 * Commands in one long-lived Docker container: created hardened on open (or attached with
 * {@code airlock.docker.container}), removed once on close unless attached. Each command is an
 * exec of {@code sh -c WRAPPER} started over a hijacked connection ({@link HijackedExec}): stdin
 * streams with a real end-of-input (PIPE mode), the environment travels in the exec's API call
 * (never argv), and the core's process-group kill stops a command's whole tree. Files go through
 * the core's shell implementation over that same pipe: byte-exact and streamed both ways, atomic
 * writes with modes, and every write passes the core's write rules (a native archive-API
 * implementation would bypass them).
 */
public final class DockerEnvironment extends AbstractEnvironment {
    private final DockerSettings docker;
    private final DockerDaemon daemon;
    private final boolean attached;
    private final Capabilities capabilities;
    private volatile String containerId;
    private volatile HijackedExec lease;

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
            env.initialize();
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

    /** Docker has no exec kill: the core's process-group kill, noted so the signal exit is not blamed on the container. */
    @Override
    protected void kill(RemoteProcess process, java.util.OptionalLong group, boolean force) throws IOException {
        if (process instanceof DockerProcess p) {
            p.markKilled();
        }
        super.kill(process, group, force);
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
