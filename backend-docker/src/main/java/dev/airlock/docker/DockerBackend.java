package dev.airlock.docker;

import com.github.dockerjava.api.command.InspectContainerResponse;
import dev.airlock.Capabilities;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.NetworkMode;
import dev.airlock.PortSupport;
import dev.airlock.Ports;
import dev.airlock.RemoteFiles;
import dev.airlock.containment.TargetProbe;
import dev.airlock.shell.Shell;
import dev.airlock.shell.StdinScripts;
import dev.airlock.spi.Backend;
import dev.airlock.spi.ControlShell;
import dev.airlock.spi.CoreAccess;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.GroupState;
import dev.airlock.spi.Killer;
import dev.airlock.spi.Launch;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.PortForwarder;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.spi.ResourceLabels;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;

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
 *
 * <p>One exec more runs from open to close: the control shell, started with the container, which
 * answers the probe, the profile home, the guard's path resolutions and the private dir's removal
 * (each a line each way, where an exec of its own is a round trip into the container). So open
 * costs the container and one exec, a small write one exec (the shell write's script), and close none.
 */
public final class DockerBackend implements Backend, Killer {
    /** The control shell's builtins and /proc scan answer in milliseconds; past this it is taken for gone. */
    private static final Duration CONTROL_ANSWER = Duration.ofMillis(500);
    /** What stopping a container that failed to start properly may take. */
    private static final Duration STOP_BOUND = Duration.ofMinutes(2);
    private final String id = "docker-" + StdinScripts.randomToken().substring(0, 12);
    private final DockerSettings docker;
    private final DockerDaemon daemon;
    private final boolean attached;
    private final Capabilities capabilities;
    private volatile CoreAccess core;
    private volatile String containerId;
    private volatile HijackedExec lease;
    private volatile ArchiveMounts mounts = ArchiveMounts.NONE;
    private volatile DockerFiles files;
    private volatile ControlShell control;
    /** {@code airlock.network=allowlist}'s plan, if asked; and what its check at open found unreachable. */
    private final Optional<NamespaceFirewall.Plan> allowlist;
    private volatile String allowlistVerified;

    private DockerBackend(DockerSettings docker, DockerDaemon daemon, Optional<NamespaceFirewall.Plan> allowlist) {
        this.docker = docker;
        this.daemon = daemon;
        this.allowlist = allowlist;
        this.attached = docker.container().isPresent();
        this.capabilities = Capabilities.pipe()
                .withNativeEnv(true)
                .withNetworkModes(networkModes(docker))
                .withAttachable(true)
                // Published when the container is created (airlock.ports), read back from inspect.
                .withPorts(PortSupport.DECLARED)
                .withDisposable(!attached && docker.volumes().isEmpty())
                .withArgvLimit(96 * 1024)
                .withSnapshots(true);
    }

    /** {@code off} is {@code --network none}: the container has only its own loopback. */
    private static final Set<NetworkMode> NETWORK_MODES = EnumSet.of(NetworkMode.ON, NetworkMode.OFF);

    /**
     * The modes enforced here: {@code allowlist} only in a container Airlock creates, with a daemon
     * on this machine that this JVM can write packet filter rules for ({@link NamespaceFirewall}).
     */
    static Set<NetworkMode> networkModes(DockerSettings docker) {
        Set<NetworkMode> modes = EnumSet.copyOf(NETWORK_MODES);
        if (docker.container().isEmpty() && docker.runtime().filter(r -> !r.equals("runc")).isEmpty()
                && NamespaceFirewall.whyNotEnforceable(docker).isEmpty()) {
            modes.add(NetworkMode.ALLOWLIST);
        }
        return modes;
    }

    static Environment open(OpenContext context, DockerSettings docker) {
        // Before a container exists: an allowlist this daemon cannot enforce is one line saying why.
        Optional<NamespaceFirewall.Plan> allowlist = NamespaceFirewall.plan(context.settings(), docker);
        NetworkMode.require(context.settings(), "docker", networkModes(docker));
        DockerDaemon daemon = new DockerDaemon(docker);
        DockerBackend backend;
        try {
            backend = new DockerBackend(docker, daemon, allowlist);
        } catch (RuntimeException e) {
            daemon.close();
            throw e;
        }
        try {
            backend.startContainer();
        } catch (RuntimeException e) {
            backend.stopSandbox(Deadline.in(STOP_BOUND));
            throw e;
        }
        return context.open(backend);
    }

    /** The backend of {@code env}, a docker environment (for tests). */
    static DockerBackend of(Environment env) {
        return OpenContext.backendOf(env, DockerBackend.class)
                .orElseThrow(() -> new IllegalArgumentException(env.name() + " is not a docker environment"));
    }

    /** Creates and starts the container, or finds the attached one running. */
    private void startContainer() {
        if (attached) {
            containerId = daemon.requireRunning(docker.container().get()).getId();
        } else {
            DockerDaemon.Started started = daemon.createAndStart(docker, "airlock-" + id.substring("docker-".length()),
                    DockerDaemon.labels(docker, id, false), true, allowlist);
            containerId = started.id();
            lease = started.lease();
            allowlistVerified = started.verified();
        }
        if (docker.archiveWrites()) {
            mounts = ArchiveMounts.of(daemon.inspect(containerId));
        }
        // Before the probe, which it answers: then open starts no command of its own but this one.
        String cid = containerId;
        control = ControlShell.tryStart(loop -> DockerProcess.start(daemon, cid,
                        daemon.createExec(cid, DockerProcess.argv("sh", loop), Map.of(), true), docker.apiTimeout()),
                "docker-" + DockerDaemon.shortId(cid), CONTROL_ANSWER, docker.apiTimeout()).orElse(null);
    }

    /**
     * The target probe's script run in the control shell, which runs as the probe's own command
     * would (the exec user, the container's environment and working directory: an exec with no
     * variables of its own, as a raw run's is here, where nothing is unset), so its records are
     * the script's. One exec less at open; empty (the script runs as a command) without a whole answer.
     */
    @Override
    public Optional<byte[]> probe(String privateDirBase, Set<String> unset, Deadline deadline) {
        if (!unset.isEmpty()) {
            return Optional.empty(); // the shell's environment has them: only a command can run without
        }
        // Within the open's deadline: a probe given up on would run again as a command and make a
        // second private dir, left behind in an attached container (the ssh backend met this).
        return inControl(TargetProbe.script(privateDirBase, !privateDirBase.contains("$")), deadline.remaining())
                .map(out -> out.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code umask 077; mkdir -p -- HOME} in the control shell: one exec less at open. */
    @Override
    public boolean makeHome(String home, Deadline deadline) {
        String h = Shell.quotePath(home);
        return inControl("umask 077\nmkdir -p -- " + h + " && [ -d " + h + " ]\n", CONTROL_ANSWER).isPresent();
    }

    /** {@code rm -rf} of the private dir in the control shell (the core closes it after this): one exec less at close. */
    @Override
    public boolean removePrivateDir(String dir, Deadline deadline) {
        String d = Shell.quotePath(dir);
        return inControl("rm -rf -- " + d + "\n[ ! -e " + d + " ] && [ ! -L " + d + " ]\n", CONTROL_ANSWER).isPresent();
    }

    /** A script's whole output from the control shell; empty when there is none or it failed (a command runs it then). */
    private Optional<String> inControl(String script, Duration bound) {
        ControlShell c = control;
        if (c == null || c.dead()) {
            return Optional.empty();
        }
        try {
            return c.runWhole(script, bound);
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    @Override
    public String name() {
        return "docker";
    }

    /**
     * For {@code doctor}, under an allowlist: what the check at open found (a connection from
     * inside the container's network to a destination off the list did not arrive), or that no
     * check could be made. Otherwise the default (the container is the isolation).
     */
    @Override
    public String isolation() {
        if (allowlist.isEmpty()) {
            return Backend.super.isolation();
        }
        String v = allowlistVerified;
        return "airlock.network=allowlist: nftables rules in the container's network namespace, written from the host"
                + (v == null ? " (not verified from inside: no bash here to connect with, or the list names the bridge gateway)"
                : "; verified: " + v);
    }

    /** What the check at open found: the doctor's network row reads it (see {@link NamespaceFirewall#verify}). */
    @Override
    public Optional<String> allowlistCheck() {
        return allowlist.isEmpty() ? Optional.empty() : Optional.ofNullable(allowlistVerified);
    }

    @Override
    public String id() {
        return id;
    }

    /** The daemon keeps an exec's streams open after its process exits only for its own drain time, whatever still holds them: they cannot tell the core a job was left. */
    @Override
    public boolean outputEndsAtExit() {
        return true;
    }

    @Override
    public void bind(CoreAccess core) {
        this.core = core;
    }

    /**
     * With the target known: the archive route's files, where that route is on. Without it the
     * core's shell write is the whole write (a native files() would only pass it through, and the
     * guard in front of a native API would resolve the path once more: one command per write).
     */
    @Override
    public void onTargetReady(dev.airlock.Target target, dev.airlock.containment.Containment containment) {
        if (docker.archiveWrites()) {
            String cid = containerId;
            files = new DockerFiles(core.shellFiles(), script -> core.run(script, null), (dir, tar) -> daemon.putArchive(cid, dir, tar),
                    target::expand, mounts);
        }
    }

    /**
     * A port the container publishes (declared in {@code airlock.ports} when it was created, by
     * this environment or by {@code airlock up}): the host port the daemon picked, from inspect.
     * A port it does not publish cannot be added to a running container: one line saying so.
     */
    @Override
    public Optional<PortForwarder> portForwarder() {
        return Optional.of((port, deadline) -> {
            String cid = containerId;
            SortedSet<Integer> published = new TreeSet<>();
            Optional<String> at = daemon.publishedAt(cid, port, published);
            if (at.isEmpty()) {
                throw new ConfigurationException("port " + port + " is not published by container "
                        + DockerDaemon.shortId(cid) + " (" + (published.isEmpty() ? "it publishes none" : "it publishes "
                        + published.stream().map(String::valueOf).collect(Collectors.joining(",")))
                        + "); ports are declared when the container is created: open one with "
                        + Ports.KEY + "=" + port + " (airlock up --port " + port + ")");
            }
            return URI.create("http://" + at.get() + "/");
        });
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
    public Optional<RemoteFiles> files() {
        return Optional.ofNullable(files);
    }

    /** How many writes took the archive route (for tests and the benchmark). */
    long archiveWrites() {
        DockerFiles f = files;
        return f == null ? 0 : f.archiveWrites();
    }

    @Override
    public RemoteProcess launch(Launch launch, Deadline deadline) throws IOException {
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

    @Override
    public Optional<Killer> killer() {
        return Optional.of(this);
    }

    /**
     * Docker has no exec kill: the core's process-group kill (through the control shell while it
     * lives), noted so the signal exit is not blamed on the container.
     */
    @Override
    public void kill(RemoteProcess process, OptionalLong group, boolean force, Deadline deadline) throws IOException {
        if (process instanceof DockerProcess p) {
            p.markKilled();
        }
        core.shellKiller().kill(process, group, force, deadline);
    }

    /** Docker has no exec kill: {@link #kill} signals the group, so without one the core finds it by the nonce. */
    @Override
    public boolean killsWithoutGroup() {
        return false;
    }

    @Override
    public GroupState groupState(long pgid, Deadline deadline) throws IOException {
        return core.shellKiller().groupState(pgid, deadline);
    }

    @Override
    public Optional<ControlShell> controlShell() {
        return Optional.ofNullable(control);
    }


    /**
     * {@code docker commit} of the container (paused meanwhile) to an untagged image labelled as
     * Airlock's, whose id opens with {@code airlock.docker.snapshot=ID}. Docker leaves volumes and
     * tmpfs mounts out of a commit: the private dir, under the volume every created container gets
     * at /tmp, is never in it. A container whose private dir is on its root filesystem (one attached
     * that Airlock did not create) is refused in one line rather than saved with staged files.
     */
    @Override
    public String snapshot(String privateDir, Deadline deadline) {
        String cid = containerId;
        InspectContainerResponse c = daemon.inspect(cid);
        List<String> mounts = new ArrayList<>();
        if (c.getMounts() != null) {
            c.getMounts().forEach(m -> {
                if (m.getDestination() != null) {
                    mounts.add(m.getDestination().getPath());
                }
            });
        }
        if (c.getHostConfig() != null && c.getHostConfig().getTmpFs() != null) {
            mounts.addAll(c.getHostConfig().getTmpFs().keySet());
        }
        if (mounts.stream().noneMatch(m -> privateDir.startsWith(m.endsWith("/") ? m : m + "/"))) {
            throw new ConfigurationException("the docker container " + DockerDaemon.shortId(cid)
                    + " keeps Airlock's private dir " + privateDir + " on its root filesystem, so a snapshot would hold staged"
                    + " files: snapshot a container Airlock created (airlock up), or one with a volume or tmpfs at /tmp");
        }
        Map<String, String> labels = new LinkedHashMap<>(docker.labels());
        labels.putAll(ResourceLabels.now(false).asMap(DockerDaemon.LABEL_PREFIX));
        labels.put(DockerDaemon.LABEL_SNAPSHOT_OF, cid);
        // A commit keeps the container's labels under these: a kept container's must not make its snapshot kept.
        labels.put(DockerDaemon.LABEL_PREFIX + ResourceLabels.KEEP, "false");
        return daemon.commit(cid, labels);
    }

    /** The container never sees the JVM's environment, so there is nothing of it to strip. */
    @Override
    public Set<String> childUnset(Set<String> proposed) {
        return Set.of();
    }

    /**
     * Runs once (the core's stop-once latch): removes the container unless attached, then ends its
     * lease (which alone would end the container too) and frees the client.
     */
    @Override
    public void stopSandbox(Deadline deadline) {
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
