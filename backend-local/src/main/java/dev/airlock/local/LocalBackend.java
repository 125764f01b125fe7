package dev.airlock.local;

import dev.airlock.BackendUnavailableException;
import dev.airlock.Capabilities;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.NetworkMode;
import dev.airlock.RemoteFiles;
import dev.airlock.Target;
import dev.airlock.containment.Containment;
import dev.airlock.containment.HomeMode;
import dev.airlock.settings.Settings;
import dev.airlock.shell.Launcher;
import dev.airlock.spi.Backend;
import dev.airlock.spi.CoreAccess;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.GroupState;
import dev.airlock.spi.Killer;
import dev.airlock.spi.Launch;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.PortForwarder;
import dev.airlock.spi.RemoteProcess;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Commands as processes on this host. Each runs as {@code setsid SHELL -c SCRIPT}: its own session
 * and process group, so a timeout or cancel signals the whole tree. Stdin, stdout and stderr are
 * the process's pipes (PIPE mode); the environment is passed natively with secrets removed.
 * Where bubblewrap runs (the default; {@code airlock.local.isolation=bwrap} insists on it) every
 * command after the probe runs under {@link Bubblewrap} ({@code setsid bwrap ... SHELL -c SCRIPT}),
 * the same pipes and process group; where it cannot, the first exec logs one warning saying so.
 */
public final class LocalBackend implements Backend, Killer {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(LocalBackend.class);
    private final String id = "local-" + ProcessHandle.current().pid() + "-" + Long.toHexString(System.nanoTime());
    private final Settings settings;
    private final LocalSettings local;
    private final Capabilities capabilities;
    private final String setsid;
    /**
     * {@code env --default-signal=...} before the shell, where this host's env supports it; found
     * out at the first launch that needs it (a JVM ignoring none of the signals never runs env).
     */
    private volatile List<String> defaultSignals;
    private final Optional<Path> bwrap;
    /** HUP, INT, QUIT, PIPE, TERM: what {@link Launcher#defaultSignalsArgv} resets. */
    private static final int[] DEFAULT_SIGNALS = {1, 2, 3, 13, 15};
    /**
     * What a command can do without a sandbox, for doctor's isolation line: the exits no setting
     * of the environment closes, so nothing in the report can read as enforced.
     */
    static final String UNENFORCED = "Commands are this JVM's own children and keep to their environment only if"
            + " they choose to: a command can write the passwd home by its real path (ssh-keygen, for one, ignores $HOME),"
            + " install a real crontab with /usr/bin/crontab by full path, read this JVM's environment and memory"
            + " (/proc/PID/environ, /proc/PID/mem), signal it, and so change what it reports, exit codes included;"
            + " the command guard reads paths when it checks a command, so a link flipped after the check takes a"
            + " write elsewhere (the file API's writes hold). Only the kernel holds against that: "
            + LocalSettings.ISOLATION + "=bwrap";
    /** Why there is no sandbox, when there is none (for doctor). */
    private final String noIsolation;
    /** The one-line warning the first exec logs when bubblewrap was wanted and cannot run; null once logged or when none. */
    private final java.util.concurrent.atomic.AtomicReference<String> unenforcedWarning;
    private volatile Bubblewrap sandbox;
    /** {@link #sandbox}'s file tree, set before it; null where its options cannot be read back. */
    private volatile SandboxView sandboxView;
    /** Under bubblewrap with the network off: the environment's own network, made before the sandbox is planned. */
    private volatile NetworkAnchor network;
    /** The exposed ports of {@link #network}, by port; ended at close before the anchor. */
    private final Map<Integer, LoopbackForward> forwards = new java.util.concurrent.ConcurrentHashMap<>();
    /** Where commands start when {@code airlock.local.workdir} is {@code none}. */
    private volatile String childrenHome;
    private volatile CoreAccess core;
    private final LocalFiles nativeFiles = new LocalFiles(() -> core.files(), p -> core.target().expand(p),
            this::startDirectory, this::ensureOpen);

    /** Under {@code airlock.network=allowlist}: the filter, resolved at open; null in every other mode. */
    private final AllowlistFilter allowlist;
    /** What {@link dev.airlock.spi.AllowlistCheck} found at open; null when no check ran. */
    private volatile String allowlistChecked;

    private LocalBackend(Settings settings, LocalSettings local, Optional<Path> bwrap, String noIsolation,
                         String unenforcedWarning, AllowlistFilter allowlist) {
        this.allowlist = allowlist;
        this.settings = settings;
        this.local = local;
        this.bwrap = bwrap;
        this.noIsolation = noIsolation;
        this.unenforcedWarning = new java.util.concurrent.atomic.AtomicReference<>(unenforcedWarning);
        this.setsid = dev.airlock.spi.HostPrograms.onPath("setsid").map(Path::toString).orElse("setsid");
        this.capabilities = Capabilities.pipe()
                // Only bubblewrap's own network namespace cuts the network; a bare host process keeps the host's.
                // An allowlist is that namespace with a filtered way out, where the tools for it are here.
                .withNetworkModes(bwrap.isEmpty() ? EnumSet.of(NetworkMode.ON) : allowlistMissing().isEmpty()
                        ? EnumSet.allOf(NetworkMode.class) : EnumSet.of(NetworkMode.ON, NetworkMode.OFF))
                // A command's port is this host's own port (it shares the host's network); with the
                // network off, a forward into the environment's own network.
                .withPorts(dev.airlock.PortSupport.ANY)
                .withStdinMode(local.stdinMode())
                .withNativeEnv(local.nativeEnv())
                .withArgvLimit(100 * 1024);
    }

    static Environment open(OpenContext context) {
        LocalSettings local = LocalSettings.from(context.settings());
        if (local.workdir().isPresent() && !Files.isDirectory(Path.of(local.workdir().get()))) {
            throw new ConfigurationException("setting " + LocalSettings.WORKDIR + " names " + local.workdir().get()
                    + ", which is not a directory; create it, or set it to none");
        }
        Optional<Path> bwrap = Bubblewrap.find(local);
        boolean isolate;
        String why;
        String warning = null;
        if (local.isolation().isPresent()) {
            isolate = local.isolation().get() == LocalSettings.Isolation.BWRAP;
            if (isolate && bwrap.isEmpty()) {
                throw new BackendUnavailableException(LocalSettings.ISOLATION + "=bwrap needs bubblewrap, which is not "
                        + local.bwrap().map(b -> "at " + b).orElse("on PATH") + "; " + Bubblewrap.PACKAGE_HINT);
            }
            why = "none, chosen with " + LocalSettings.ISOLATION + "=none";
        } else {
            Optional<String> unusable = bwrap.isEmpty()
                    ? Optional.of("bubblewrap is not " + local.bwrap().map(b -> "at " + b).orElse("on PATH") + "; "
                            + Bubblewrap.PACKAGE_HINT)
                    : Bubblewrap.unusable(bwrap.get());
            isolate = unusable.isEmpty();
            why = "none, because " + unusable.orElse("");
            warning = "commands on this machine are not contained: " + unusable.orElse("")
                    + " (set " + LocalSettings.ISOLATION + "=none to choose this and silence the warning)";
        }
        AllowlistFilter allowlist = null;
        if (NetworkMode.isSet(context.settings()) && NetworkMode.from(context.settings()) == NetworkMode.ALLOWLIST) {
            if (!isolate) {
                throw new ConfigurationException(NetworkMode.KEY + "=allowlist needs bubblewrap's own network namespace"
                        + " on the local backend, and commands here run without it (isolation: " + why + "); install"
                        + " bubblewrap and drop " + LocalSettings.ISOLATION + "=none, or use the docker backend");
            }
            Optional<String> missing = allowlistMissing();
            if (missing.isPresent()) {
                // As the core refuses a mode a backend does not declare (and here it is not declared).
                throw new ConfigurationException(NetworkMode.KEY + "=allowlist on the local backend needs "
                        + missing.get() + " to enforce it, which this machine lacks; provide it, or open with "
                        + NetworkMode.KEY + "=off");
            }
            allowlist = AllowlistFilter.of(local.allowlist()); // names resolved now: a bad one refused before anything runs
        }
        if (!isolate && !local.network() && (NetworkMode.isSet(context.settings()) || context.settings().get(LocalSettings.NETWORK).isPresent())) {
            throw new ConfigurationException((NetworkMode.isSet(context.settings()) ? NetworkMode.KEY : LocalSettings.NETWORK)
                    + "=off needs bubblewrap's own network namespace, and commands here run without it (isolation: " + why
                    + "); install bubblewrap and drop " + LocalSettings.ISOLATION + "=none, or use the docker backend");
        }
        why += ". " + UNENFORCED;
        OpenContext opening = isolate ? withProfileHome(context) : context;
        return opening.open(new LocalBackend(opening.settings(), local, isolate ? bwrap : Optional.empty(), why,
                isolate ? null : warning, allowlist));
    }

    /** What an allowlist needs here besides bubblewrap and util-linux: the link out and the filter; empty when both are. */
    private static Optional<String> allowlistMissing() {
        if (!SlirpLink.available()) {
            return Optional.of("slirp4netns (the way out of the environment's own network)");
        }
        if (dev.airlock.spi.HostPrograms.find("nft").isEmpty()) {
            return Optional.of("nftables' nft (the filter inside it)");
        }
        if (!Files.isReadable(Path.of("/dev/net/tun")) || !Files.isWritable(Path.of("/dev/net/tun"))) {
            return Optional.of("a /dev/net/tun this user can open (slirp4netns makes its interface with it)");
        }
        return Optional.empty();
    }

    @Override
    public String name() {
        return "local";
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public void bind(CoreAccess core) {
        this.core = core;
    }

    /** Under bubblewrap the real home is hidden, so children get the profile home (auto means profile). */
    private static OpenContext withProfileHome(OpenContext context) {
        Settings s = context.settings();
        Optional<String> mode = s.get(HomeMode.KEY);
        if (mode.isPresent() && HomeMode.parse(mode.get()) == HomeMode.REAL) {
            throw new ConfigurationException("bubblewrap (" + LocalSettings.ISOLATION + "=bwrap, the default where it runs)"
                    + " hides the real home, so it cannot be the children's HOME (" + HomeMode.KEY + "=" + mode.get()
                    + "); use auto or profile, or set " + LocalSettings.ISOLATION + "=none");
        }
        if (mode.isPresent() && HomeMode.parse(mode.get()) == HomeMode.PROFILE) {
            return context;
        }
        return context.withSettings(s.with(HomeMode.KEY, "profile"));
    }

    @Override
    public void onTargetReady(Target target, Containment containment) {
        childrenHome = containment.home();
        if (bwrap.isEmpty()) {
            return;
        }
        if (!local.network()) {
            network = allowlist != null ? NetworkAnchor.start(Bubblewrap.runsAsRoot(), allowlist)
                    : NetworkAnchor.start(Bubblewrap.runsAsRoot());
        }
        if (allowlist != null) {
            try {
                allowlistChecked = checkAllowlist().orElse(null);
            } catch (RuntimeException leaked) {
                endNetwork();
                throw leaked;
            }
        }
        try {
            Bubblewrap planned = Bubblewrap.plan(bwrap.get(), target, containment, local, settings, System.getenv(),
                    Optional.ofNullable(network));
            sandboxView = planned.view().orElse(null);
            sandbox = planned;
        } catch (RuntimeException e) {
            endNetwork();
            throw e;
        }
    }

    /**
     * The probe is answered in Java from this host ({@link LocalProbe}): no script and none of its
     * processes. Under bubblewrap too: the sandbox is planned from the probe's answers, so the
     * probe's script would run on this host as well, unsandboxed.
     */
    @Override
    public Optional<byte[]> probe(String privateDirBase, Set<String> unset, Deadline deadline) {
        Map<String, String> env = new HashMap<>(System.getenv());
        unset.forEach(env::remove);
        return LocalProbe.answer(privateDirBase, env);
    }

    /**
     * The profile home is made in Java ({@link HostDirs#makeDirs}), saving a script; under
     * bubblewrap too, where it is made before the sandbox (which binds it) and its script would run
     * on this host as well.
     */
    @Override
    public boolean makeHome(String home, Deadline deadline) {
        return HostDirs.makeDirs(home);
    }

    /**
     * The private dir is removed in Java, a host directory under bubblewrap too (bound at the same
     * path; {@link #stopSandbox} removes what commands still running at this point leave after it).
     * Before the sandbox is planned (an open that failed) the script removes it.
     */
    @Override
    public boolean removePrivateDir(String dir, Deadline deadline) {
        return (bwrap.isEmpty() || sandbox != null) && HostDirs.removeTree(Path.of(dir));
    }

    @Override
    public String isolation() {
        Bubblewrap b = sandbox;
        return b != null ? b.describe() : noIsolation;
    }

    /**
     * The allowlist's filter checked from the namespace's side (outside bubblewrap, with none of a
     * command's limits): a connection to one of this machine's own addresses, which slirp4netns
     * carries out like any destination, at a port the list does not name, so only the filter's
     * last rule can stop it (the host's loopback, which slirp4netns may not relay at all, would
     * prove nothing of the filter). Where the list names that address and port, or this machine
     * has no such address, no check: the doctor then says so.
     */
    private Optional<String> checkAllowlist() {
        Optional<java.net.InetAddress> own = ownAddress();
        if (own.isEmpty()) {
            return Optional.empty();
        }
        String ip = own.get().getHostAddress();
        return dev.airlock.spi.AllowlistCheck.unlistedUnreachable(own.get(), ip, network.enter(),
                port -> allowlist.names(ip, port), "the environment's network namespace");
    }

    /** An IPv4 address of this machine's, not the loopback's nor inside slirp4netns's own network. */
    static Optional<java.net.InetAddress> ownAddress() {
        try {
            for (java.net.NetworkInterface n : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
                if (!n.isUp() || n.isLoopback()) {
                    continue;
                }
                for (java.net.InetAddress a : java.util.Collections.list(n.getInetAddresses())) {
                    if (a instanceof java.net.Inet4Address && !a.isLoopbackAddress()
                            && !AllowlistFilter.within(a.getHostAddress() + "/32", AllowlistFilter.SLIRP_NETWORK)) {
                        return Optional.of(a);
                    }
                }
            }
        } catch (java.net.SocketException e) {
            // no interfaces to read: no check
        }
        return Optional.empty();
    }

    /** What the check at open found of the allowlist's filter, from the namespace's side but outside bubblewrap. */
    @Override
    public Optional<String> allowlistCheck() {
        return Optional.ofNullable(allowlistChecked);
    }

    /** Under bubblewrap every protected home's credential dirs are read-only binds (or hidden). */
    @Override
    public boolean credentialsReadOnly() {
        return sandbox != null;
    }

    /**
     * The port itself on this host's loopback where commands share the host's network. Under
     * bubblewrap with the network off they share a namespace of the environment's own
     * ({@link NetworkAnchor}): a {@link LoopbackForward} listens on the host's loopback and relays
     * into it, until the port or the environment is closed.
     */
    @Override
    public Optional<PortForwarder> portForwarder() {
        return Optional.of(new PortForwarder() {
            @Override
            public URI open(int port, Deadline deadline) throws IOException {
                NetworkAnchor n = network;
                if (n == null) {
                    return URI.create("http://127.0.0.1:" + port + "/");
                }
                if (n.closed()) {
                    throw new IOException("the local environment " + id + " has ended its own network; open a new one");
                }
                LoopbackForward f = LoopbackForward.open(n, port, id);
                LoopbackForward before = forwards.put(port, f);
                if (before != null) {
                    before.close(); // the core opens a port once; a second forward would only leak the first
                }
                return f.url();
            }

            @Override
            public void close(int port, URI uri) {
                LoopbackForward f = forwards.remove(port);
                if (f != null) {
                    f.close();
                }
            }
        });
    }

    /** The environment's own network (network off or an allowlist, under bubblewrap); empty otherwise. For tests. */
    Optional<NetworkAnchor> networkAnchor() {
        return Optional.ofNullable(network);
    }

    /** Ends every forward, then the anchor: nothing of the environment's own network outlives it. */
    private void endNetwork() {
        forwards.values().forEach(LoopbackForward::close);
        forwards.clear();
        NetworkAnchor n = network;
        if (n != null) {
            n.close();
        }
    }

    @Override
    public Optional<Killer> killer() {
        return Optional.of(this);
    }

    /**
     * Signals the process group from the host: a second sandbox could not see the first one's
     * processes. A TERM spares bwrap's own two processes (see below); a KILL takes the whole group.
     */
    @Override
    public void kill(RemoteProcess process, OptionalLong group, boolean force, Deadline deadline) throws IOException {
        if (sandbox == null) {
            core.shellKiller().kill(process, group, force, deadline);
            return;
        }
        long pgid = group.orElseThrow(() -> new IOException("no process group to signal"));
        if (!force) {
            // bwrap dies of a TERM, and its init then takes the sandbox's pid namespace down with
            // SIGKILL: a TERM to the whole group would reach the command as a KILL, leaving no grace
            // for its traps (a cancelled write's temp file). So the TERM goes to the processes
            // inside only; bwrap's init reports their end. The KILL after the grace takes them all.
            for (long pid : Procfs.groupMembersExcept(pgid, "bwrap")) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy);
            }
            return;
        }
        Process p = new ProcessBuilder("kill", "-s", "KILL", "--", "-" + pgid)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@link #kill} signals the group (every command's is known here: its launched process leads it). */
    @Override
    public boolean killsWithoutGroup() {
        return false;
    }

    /**
     * Reads the group from this host's {@code /proc}: cheaper than a script, and under bubblewrap
     * the commands' pids are the host's ones the core recorded, not the sandbox's.
     */
    @Override
    public GroupState groupState(long pgid, Deadline deadline) {
        if (!Procfs.anyWith(2, pgid, -1, -1)) {
            return GroupState.gone();
        }
        return GroupState.alive(Procfs.startTimeOf(pgid));
    }

    /**
     * The private dir is a bind mount point inside the sandbox, so it is removed from the host side.
     * What the walk cannot open (a directory a command left without read or search permission, which
     * stops a user who is not root) is given to {@link HostDirs#removeQuiescent}: every command is dead
     * by now (each had a pid namespace of its own, and the kills came first), so nothing can swap a
     * link in while it works by path.
     */
    @Override
    public void stopSandbox(Deadline deadline) {
        endNetwork(); // the commands were killed before: what is left in the namespace are forwards and the anchor
        Bubblewrap b = sandbox;
        if (b == null) {
            return;
        }
        Path dir = Path.of(core.target().privateDir());
        if (!HostDirs.removeTree(dir)) {
            HostDirs.removeQuiescent(dir); // best effort, as for any backend's private dir
        }
    }

    /** Also where open failed after the anchor was made, before any sandbox stop. */
    @Override
    public void close() {
        endNetwork();
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    /**
     * Files natively on this host's filesystem, where that is what commands see: not under
     * bubblewrap. There a read or write in this JVM would open names in directories commands can
     * write, where a FIFO renamed in blocks the open for good (Java gives no O_NONBLOCK or
     * O_DIRECTORY): the scripts run in the sandbox, under the exec's deadline.
     */
    @Override
    public Optional<RemoteFiles> files() {
        if (sandbox != null || bwrap.isPresent()) {
            return Optional.empty();
        }
        return Optional.of(nativeFiles);
    }

    /**
     * Unsandboxed, Airlock's scripts are this JVM's children on this host, started where commands
     * start: the guard resolves paths in-process. Under bubblewrap too, through the sandbox's view
     * ({@link #hostPlace}), once it is planned.
     */
    @Override
    public Optional<Path> hostView() {
        if (sandbox != null) {
            return Optional.ofNullable(sandboxView).map(SandboxView::start);
        }
        if (bwrap.isPresent()) {
            return Optional.empty();
        }
        File start = startDirectory();
        return Optional.of(start != null ? start.toPath() : Path.of("").toAbsolutePath());
    }

    /** Under bubblewrap, where the sandbox's mounts put a path ({@link SandboxView#hostPlace}); else the path itself. */
    @Override
    public Optional<Path> hostPlace(Path path) {
        SandboxView v = sandboxView;
        return v == null ? Optional.of(path) : v.hostPlace(path);
    }

    @Override
    public RemoteProcess launch(Launch launch, Deadline deadline) throws IOException {
        String warning = unenforcedWarning.getAndSet(null);
        if (warning != null) {
            LOG.warn(warning);
        }
        Bubblewrap b = sandbox;
        NetworkAnchor n = network;
        if (b != null && n != null && n.closed()) {
            // Its descriptor numbers may name other files now (another environment's network, even).
            throw new IOException("the local environment " + id + " has ended its own network; open a new one");
        }
        List<String> argv = new ArrayList<>();
        argv.add(setsid);
        // A JVM under nohup must not hand the command an ignored SIGHUP; one that ignores none of
        // them (the usual case) saves the env process (a millisecond per command).
        if (Procfs.ignoresAny(DEFAULT_SIGNALS)) {
            argv.addAll(defaultSignals());
        }
        argv.addAll(b != null ? b.argv(launch.shell(), launch.script()) : List.of(launch.shell(), "-c", launch.script()));
        ProcessBuilder pb = new ProcessBuilder(argv);
        Map<String, String> env = pb.environment();
        launch.unset().forEach(env::remove);
        env.putAll(launch.env());
        if (!launch.pipeStdin()) {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        if (b == null) {
            pb.directory(startDirectory()); // bubblewrap changes into it itself
        }
        long forks = Procfs.forks(); // before the fork: survivors are looked for among later pids
        for (int attempt = 1; ; attempt++) {
            Process p = pb.start();
            if (b == null) {
                return new LocalProcess(p, forks, new byte[0]);
            }
            // Nothing of the command runs before READY, and nothing is written to it before launch
            // returns: a sandbox bubblewrap failed to set up is started again, safely.
            byte[] before = untilReady(p.getErrorStream());
            boolean ready = before.length > 0 && before[before.length - 1] == Bubblewrap.READY;
            String said = new String(before, 0, ready ? before.length - 1 : before.length, java.nio.charset.StandardCharsets.UTF_8);
            if (ready || attempt == SETUP_ATTEMPTS || !Bubblewrap.mountTableRace(said)) {
                return new LocalProcess(p, forks, ready ? java.util.Arrays.copyOf(before, before.length - 1) : before);
            }
            LOG.debug("bubblewrap could not set the sandbox up ({}); starting it again, nothing ran", said.strip());
            try {
                p.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted while starting the command");
            }
        }
    }

    /** Attempts at setting the sandbox up when the host's mount table changed under bubblewrap. */
    private static final int SETUP_ATTEMPTS = 3;

    /**
     * Reads stderr up to and including {@link Bubblewrap#READY}, or to its end when bubblewrap
     * failed first (at most 64 KiB: then it is the command's, to be passed on).
     */
    private static byte[] untilReady(InputStream err) throws IOException {
        java.io.ByteArrayOutputStream seen = new java.io.ByteArrayOutputStream();
        int c;
        while (seen.size() < 64 * 1024 && (c = err.read()) >= 0) {
            seen.write(c);
            if (c == Bubblewrap.READY) {
                break;
            }
        }
        return seen.toByteArray();
    }

    private void ensureOpen() {
        if (core.isClosed()) {
            throw new dev.airlock.EnvironmentClosedException("the local environment " + id + " is closed; open a new one");
        }
    }

    private List<String> defaultSignals() {
        List<String> d = defaultSignals;
        if (d == null) {
            d = dev.airlock.spi.HostPrograms.onPath("env").map(Path::toString).map(Launcher::defaultSignalsArgv)
                    .filter(LocalBackend::works).orElse(List.of());
            defaultSignals = d;
        }
        return d;
    }

    /** Whether {@code prefix true} runs (an env without --default-signal refuses the option). */
    private static boolean works(List<String> prefix) {
        List<String> argv = new ArrayList<>(prefix);
        argv.add("true");
        return HostRun.succeeds(argv, java.time.Duration.ofSeconds(10));
    }

    /** Where commands start: {@code airlock.local.workdir}, or the children's home when it is {@code none} (as under bubblewrap). */
    private File startDirectory() {
        if (local.workdir().isPresent()) {
            return new File(local.workdir().get());
        }
        String home = childrenHome;
        return home == null ? null : new File(home); // the target probe runs before the home is known
    }

    /** A host process; being started by setsid, its pid is its process group id. */
    private static final class LocalProcess implements RemoteProcess {
        private final Process process;
        private final OptionalLong startTime;
        private final long forksAtLaunch;
        private final InputStream stderr;

        /** {@code stderrBefore}: what launch read of stderr already (bubblewrap's own words, before READY). */
        LocalProcess(Process process, long forksAtLaunch, byte[] stderrBefore) {
            this.process = process;
            this.forksAtLaunch = forksAtLaunch;
            this.startTime = Procfs.startTimeOf(process.pid());
            this.stderr = stderrBefore.length == 0 ? process.getErrorStream()
                    : new java.io.SequenceInputStream(new java.io.ByteArrayInputStream(stderrBefore), process.getErrorStream());
        }

        @Override
        public OptionalLong startTime() {
            return startTime;
        }

        @Override
        public OutputStream stdin() {
            return process.getOutputStream();
        }

        @Override
        public InputStream stdout() {
            return process.getInputStream();
        }

        @Override
        public InputStream stderr() {
            return stderr;
        }

        @Override
        public int waitFor() throws InterruptedException {
            return process.waitFor();
        }

        @Override
        public OptionalLong processGroup() {
            return OptionalLong.of(process.pid());
        }

        /** Any process left in the command's session (setsid made its id the pid), among those forked since. */
        @Override
        public boolean hasSurvivors(OptionalLong group) {
            return Procfs.anyWith(3, process.pid(), process.pid(), forksAtLaunch);
        }

        @Override
        public void release() {
            try {
                process.getInputStream().close();
                process.getErrorStream().close();
            } catch (IOException ignored) {
                // already closed by the drains
            }
        }
    }
}
