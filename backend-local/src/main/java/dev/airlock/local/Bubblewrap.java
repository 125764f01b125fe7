package dev.airlock.local;

import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import dev.airlock.Target;
import dev.airlock.containment.Containment;
import dev.airlock.containment.OwnState;
import dev.airlock.safety.Safety;
import dev.airlock.settings.Settings;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Kernel-enforced containment for local commands with bubblewrap: the root filesystem read-only;
 * its own /dev, /proc, /tmp and /run (so no host socket is reachable); new PID, IPC and UTS
 * namespaces and a user namespace where the kernel allows one; no capability inside (so a command
 * run as root cannot unmount or remount its way out); a session without a terminal; writable binds only for the children's home, the environment's private dir, the
 * eval run dir, the working directory and {@code airlock.local.writable.*}; the hard-denied
 * credential paths inside those bound read-only again.
 */
final class Bubblewrap {
    static final String PACKAGE_HINT = "install Debian's bubblewrap package (apt-get install bubblewrap)";

    private final Path bwrap;
    private final List<String> args;
    private final List<String> nest;
    private final String description;
    /**
     * Before bwrap, as root: {@code unshare --mount --propagation private}, a mount table of its own
     * that the host's mounts and unmounts no longer reach. bwrap binds / recursively and then makes
     * each mount under it read-only; a container starting or stopping meanwhile (Docker's overlay
     * and netns mounts come and go under /var/lib and /run) failed that step ("Can't bind mount
     * /oldroot/ on /newroot/: Unable to apply mount flags"), and with it the command. Empty where it
     * cannot be had (not root, no unshare); unshare execs bwrap, so the process stays the same.
     */
    private final List<String> frozenMounts;
    /**
     * Before everything, with {@code airlock.network=off}: {@link NetworkAnchor#enter}, so bwrap
     * starts in the environment's own network (shared by all its commands) instead of making one
     * per command with {@code --unshare-net}. Empty with the network on.
     */
    private final List<String> network;

    private Bubblewrap(Path bwrap, List<String> args, List<String> nest, String description, List<String> frozenMounts,
                       List<String> network) {
        this.bwrap = bwrap;
        this.args = List.copyOf(args);
        this.nest = List.copyOf(nest);
        this.description = description;
        this.frozenMounts = List.copyOf(frozenMounts);
        this.network = List.copyOf(network);
    }

    /** The binary: {@code airlock.local.bwrap} when set (and executable), else {@code bwrap} on PATH. */
    static Optional<Path> find(LocalSettings s) {
        if (s.bwrap().isPresent()) {
            Path p = Path.of(s.bwrap().get());
            return Files.isExecutable(p) ? Optional.of(p) : Optional.empty();
        }
        return dev.airlock.spi.HostPrograms.onPath("bwrap");
    }

    /** What {@link #unusable} found, per binary: the answer does not change while this JVM runs. */
    private static final Map<Path, Optional<String>> USABLE = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Why bubblewrap cannot make a sandbox here, or empty when it can: a sandbox with the namespaces
     * every plan asks for, started once per binary and JVM. This is what decides the default
     * isolation; a plan's own {@link #check} still tries its full command line.
     */
    static Optional<String> unusable(Path bwrap) {
        return USABLE.computeIfAbsent(bwrap, b -> {
            try {
                new Bubblewrap(b, List.of("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
                        "--unshare-ipc", "--unshare-uts", "--unshare-user-try", "--cap-drop", "ALL", "--die-with-parent"),
                        List.of(), "", frozenMounts(runsAsRoot()), List.of()).check();
                return Optional.empty();
            } catch (BackendUnavailableException e) {
                return Optional.of(e.getMessage());
            }
        });
    }

    /** Whether this JVM runs as uid 0: the owner of its own /proc entry (standard NIO, no JDK-internal API). */
    static boolean runsAsRoot() {
        try {
            return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** {@link #frozenMounts}'s prefix where this process may have it (root, with util-linux's unshare). */
    private static List<String> frozenMounts(boolean root) {
        Optional<Path> unshare = dev.airlock.spi.HostPrograms.onPath("unshare");
        return root && unshare.isPresent()
                ? List.of(unshare.get().toString(), "--mount", "--propagation", "private", "--") : List.of();
    }

    /** The command line for {@code shell -c script} inside the sandbox (after {@code setsid}). */
    List<String> argv(String shell, String script) {
        List<String> argv = new ArrayList<>(args.size() + nest.size() + 16);
        argv.addAll(network);
        argv.addAll(frozenMounts);
        argv.add(bwrap.toString());
        argv.addAll(args);
        argv.add("--");
        argv.addAll(nest);
        // Once inside, before anything of the command: READY on stderr, then exec (no parent stays).
        argv.addAll(List.of("/bin/sh", "-c", "printf '\\001' >&2; exec \"$@\"", "airlock"));
        argv.add(shell);
        argv.add("-c");
        argv.add(script);
        return argv;
    }

    /**
     * What the sandbox prints on stderr first, once bubblewrap has set it up and before the command
     * starts: up to it, whatever failed, failed in bubblewrap and ran nothing.
     */
    static final int READY = 1;

    /**
     * Whether {@code stderr}, printed before {@link #READY}, is bubblewrap failing to copy a mount
     * that went away while it set the sandbox up (the host's mount table changes under it: a
     * container started or stopped), which a new attempt does not meet again.
     */
    static boolean mountTableRace(String stderr) {
        return stderr.startsWith("bwrap: ") && (stderr.contains("Can't bind mount") || stderr.contains("Unable to apply mount flags")
                || stderr.contains("Can't remount"));
    }

    String describe() {
        return description;
    }

    /** The sandbox's file tree read back from its options; empty where they hold one {@link SandboxView} does not know. */
    Optional<SandboxView> view() {
        return SandboxView.of(args);
    }

    /**
     * Plans the sandbox for a probed target and checks that bubblewrap can make it here.
     *
     * @param network with the network off, the environment's own network every command joins; empty with it on
     * @throws ConfigurationException     when a writable bind would expose /, a real home, the shared temp dir or a credential dir
     * @throws BackendUnavailableException when bubblewrap cannot create its namespaces here
     */
    static Bubblewrap plan(Path bwrap, Target t, Containment c, LocalSettings s, Settings settings, Map<String, String> env,
                           Optional<NetworkAnchor> network) {
        Set<Path> realHomes = new LinkedHashSet<>();
        for (String h : List.of(c.realHome(), t.passwdHome(), t.processHome())) {
            if (!h.isEmpty()) {
                realHomes.add(real(Path.of(h)));
            }
        }
        Set<Path> sharedTmp = new LinkedHashSet<>(List.of(Path.of("/tmp"), real(Path.of(t.tempDir()))));

        Map<Path, String> writable = new LinkedHashMap<>();
        writable.put(existing(t.privateDir(), "the private dir"), "the private dir");
        if (c.runDir().isPresent()) {
            writable.put(existing(c.runDir().get(), "the eval run dir"), "the eval run dir " + c.runDir().get());
        } else {
            writable.put(existing(c.home(), "the children's home"), "the children's home " + c.home());
        }
        s.workdir().ifPresent(w -> writable.put(existing(w, LocalSettings.WORKDIR + " (the working directory)"),
                "the working directory " + w));
        s.writable().forEach((name, p) -> writable.put(existing(p.trim(), LocalSettings.WRITABLE + "." + name),
                LocalSettings.WRITABLE + "." + name + "=" + p.trim()));

        Set<Path> protectedHomes = new LinkedHashSet<>(realHomes);
        protectedHomes.add(real(Path.of(c.home())));
        for (Map.Entry<Path, String> w : writable.entrySet()) {
            Path p = w.getKey();
            if (p.getParent() == null) {
                throw refused(w.getValue(), "/");
            }
            for (Path home : realHomes) {
                if (home.startsWith(p)) {
                    throw refused(w.getValue(), "the real home " + home);
                }
            }
            for (Path tmp : sharedTmp) {
                if (tmp.startsWith(p)) {
                    throw refused(w.getValue(), "the shared temp dir " + tmp);
                }
            }
            for (Path home : protectedHomes) {
                for (String d : Safety.hardDeniedHomeDirs()) {
                    if (p.startsWith(home.resolve(d))) {
                        throw refused(w.getValue(), "the credential directory " + home.resolve(d));
                    }
                }
            }
        }

        // After the refusals above, which name the broader mistake (a real home as the workdir, say).
        OwnState.refuseInside(settings, writable);
        refuseLinkedCredentials(protectedHomes, new ArrayList<>(writable.keySet()));
        refuseLinkedGitMetadata(writable.keySet(), new ArrayList<>(writable.keySet()));

        List<String> a = new ArrayList<>(List.of("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"));
        // bwrap covers /proc/sys read-only only where it could write it, and a command mapped to root
        // can still write the net.* sysctls of the network namespace it is in (the kernel gives their
        // owner's rights to the uid that is root of the namespace's owner): the host's with the network
        // on, an allowlist's route_localnet with one. Read-only for every command.
        if (Files.isDirectory(Path.of("/proc/sys"))) {
            a.addAll(List.of("--ro-bind", "/proc/sys", "/proc/sys"));
        }
        // The shared temp dirs are the environment's own: a dir in its private dir, bound in their
        // place, so what one command leaves in /tmp the next one finds, the host's /tmp stays out of
        // reach, and close removes it all with the private dir.
        int n = 0;
        List<Path> ownTmps = new ArrayList<>();
        for (Path tmp : sharedTmp) {
            if (Files.isDirectory(tmp, LinkOption.NOFOLLOW_LINKS)) {
                // Not the scratch dir (the private dir's tmp, the children's TMPDIR): the private dir's own
                // mount point is made inside this one, and would show up in $TMPDIR.
                Path own = Path.of(t.privateDir(), n++ == 0 ? "sandbox-tmp" : "sandbox-tmp-" + n);
                HostDirs.makeDirs(own.toString());
                Path source = existing(own.toString(), "the environment's own temp dir");
                add(a, "--bind", source, tmp);
                ownTmps.add(source);
            }
        }
        a.addAll(List.of("--tmpfs", "/run"));
        Path varRun = Path.of("/var/run");
        if (Files.isDirectory(varRun, LinkOption.NOFOLLOW_LINKS)) {
            add(a, "--tmpfs", varRun); // on Debian it is a link to /run, already covered
        }
        String runtime = env.getOrDefault("XDG_RUNTIME_DIR", "");
        if (runtime.startsWith("/") && Files.isDirectory(Path.of(runtime))) {
            Path r = real(Path.of(runtime));
            if (!r.startsWith("/run") && !r.startsWith("/tmp")) {
                add(a, "--tmpfs", r);
            }
        }
        List<Path> binds = new ArrayList<>(writable.keySet());
        binds.sort(Comparator.comparingInt(Path::getNameCount));
        // Airlock's own program inside a writable bind (the agent works in a checkout of Airlock) is
        // bound read-only, in depth order with the writable binds so a deeper writable one (a run
        // dir under target/) stays writable and a deeper read-only one wins over its writable parent.
        List<Mount> mounts = new ArrayList<>();
        binds.forEach(w -> mounts.add(new Mount(w, Mount.Kind.BIND)));
        // The environment's own temp dir is the source of /tmp's bind at every launch, and lies in the
        // private dir, which commands can write: renamed away and replaced by a link to a host dir, it
        // would give the next command that dir as a writable /tmp. A mount point cannot be renamed or
        // removed, so it is one (bound to itself, still writable).
        ownTmps.forEach(own -> mounts.add(new Mount(own, Mount.Kind.BIND)));
        for (Path p : OwnState.programFiles()) {
            if (under(p, binds) && !writable.containsKey(p)) {
                mounts.add(new Mount(p, Mount.Kind.READ_ONLY));
            }
        }
        // The real home is not the commands' business: hidden behind an empty tmpfs, with what they
        // are given (a workdir or the children's home inside it, airlock.local.readable.*) bound
        // back deeper. Its keys, tokens and history are then out of reach of a read as well.
        for (Path home : realHomes) {
            if (home.getNameCount() > 0 && Files.isDirectory(home) && !writable.containsKey(home)) {
                mounts.add(new Mount(home, Mount.Kind.HIDDEN));
            }
        }
        for (Map.Entry<String, String> r : s.readable().entrySet()) {
            Path p = Path.of(r.getValue().trim());
            if (!Files.exists(p)) {
                throw new ConfigurationException("setting " + LocalSettings.READABLE + "." + r.getKey() + " names " + p
                        + ", which does not exist; create it or remove the setting");
            }
            mounts.add(new Mount(real(p), Mount.Kind.READ_ONLY));
        }
        // A read-only bind stops writes to its path but not a rename of a directory above it: the
        // kernel refuses to rename only a mount point itself, so `mv core core.old; mkdir -p
        // core/src/main` would put fresh writable sources at the same path on the host. Every
        // directory between a writable bind and a read-only one is therefore made a mount point
        // too (bound to itself, still writable), which no rename or rmdir can move.
        Set<Path> stops = new LinkedHashSet<>(writable.keySet());
        mounts.forEach(m -> stops.add(m.path()));
        List<Path> guarded = new ArrayList<>();
        mounts.stream().filter(m -> m.kind() == Mount.Kind.READ_ONLY && under(m.path(), binds))
                .forEach(m -> guarded.add(m.path()));
        for (Path home : protectedHomes) {
            for (String d : Safety.hardDeniedHomeDirs()) {
                Path p = home.resolve(d);
                if (under(p, binds) && !Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                    createParents(p); // bwrap would create them anyway (for the --tmpfs below); now they can be pinned
                }
                guarded.add(p);
            }
            Safety.hardDeniedHomeFiles().forEach(f -> guarded.add(home.resolve(f)));
        }
        for (String state : List.of(c.airlockHome(), c.realHome() + "/.airlock")) {
            Safety.hardDeniedAirlockFiles().forEach(f -> guarded.add(Path.of(state, f)));
        }
        // Read-only too, made where missing (a file created inside a writable bind stays on the host):
        // the credential files of a writable home, and the git metadata of every writable checkout,
        // whose config and hooks the operator's own git would run (core.fsmonitor, a hook).
        Map<Path, Boolean> placeholders = new LinkedHashMap<>();
        for (Path home : protectedHomes) {
            for (String f : Safety.hardDeniedHomeFiles()) {
                if (Safety.hardDeniedHomeDirs().stream().noneMatch(d -> f.startsWith(d + "/"))) {
                    placeholders.put(home.resolve(f), false); // those under a credential dir are that dir's
                }
            }
        }
        for (Path w : writable.keySet()) {
            GitMetadata.of(w).forEach(pin -> placeholders.putIfAbsent(pin.path(), pin.directory()));
        }
        List<Path> pinnedReadOnly = new ArrayList<>();
        for (Map.Entry<Path, Boolean> e : placeholders.entrySet()) {
            Path p = e.getKey();
            if (under(p, binds) && ensureExists(p, e.getValue())) {
                pinnedReadOnly.add(p);
                guarded.add(p);
            }
        }
        Set<Path> pins = new LinkedHashSet<>();
        for (Path g : guarded) {
            Path p = real(g);
            if (!under(p, binds)) {
                continue;
            }
            for (Path d = p.getParent(); d != null && !stops.contains(d) && under(d, binds); d = d.getParent()) {
                if (Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS) && pins.add(d)) {
                    mounts.add(new Mount(d, Mount.Kind.BIND));
                }
            }
        }
        mounts.sort(Comparator.comparingInt(m -> m.path().getNameCount()));
        mounts.forEach(m -> m.addTo(a));
        // Credentials inside a read-only bind of the operator's (airlock.local.readable.*) stay hidden.
        List<Path> readableBinds = mounts.stream().filter(m -> m.kind() == Mount.Kind.READ_ONLY && !under(m.path(), binds))
                .map(Mount::path).toList();
        for (Path home : realHomes) {
            for (String d : Safety.hardDeniedHomeDirs()) {
                Path p = home.resolve(d);
                if (Files.isDirectory(p) && (under(p, readableBinds) || readableBinds.contains(p))) {
                    Mount hidden = new Mount(real(p), Mount.Kind.HIDDEN);
                    hidden.addTo(a);
                    hidden.seal(a);
                }
            }
            for (String f : Safety.hardDeniedHomeFiles()) {
                Path p = home.resolve(f);
                if (Files.isRegularFile(p) && under(p, readableBinds)) {
                    add(a, "--ro-bind", Path.of("/dev/null"), real(p));
                }
            }
        }
        // Root reads the password hashes; nothing a command needs.
        for (String secret : List.of("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")) {
            if (Files.isRegularFile(Path.of(secret), LinkOption.NOFOLLOW_LINKS)) {
                add(a, "--ro-bind", Path.of("/dev/null"), Path.of(secret));
            }
        }
        // Under an allowlist no DNS gets through: the listed names, resolved at open, are in this file.
        Optional<Path> hosts = network.flatMap(NetworkAnchor::hosts);
        if (hosts.isPresent() && Files.exists(Path.of("/etc/hosts"))) {
            add(a, "--ro-bind", hosts.get(), Path.of("/etc/hosts"));
        }
        Set<Path> readOnly = new LinkedHashSet<>();
        for (Path home : protectedHomes) {
            for (String d : Safety.hardDeniedHomeDirs()) {
                Path p = home.resolve(d);
                if (!under(p, binds)) {
                    continue;
                }
                if (Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                    Path r = real(p);
                    if (under(r, binds) && readOnly.add(r)) {
                        add(a, "--ro-bind", r, r);
                    }
                } else if (readOnly.add(p)) {
                    // An empty read-only dir, so nothing can be created there either.
                    add(a, "--tmpfs", p);
                    add(a, "--remount-ro", p);
                }
            }
            for (String f : Safety.hardDeniedHomeFiles()) {
                readOnlyIfPresent(a, readOnly, home.resolve(f), binds);
            }
        }
        for (Path p : pinnedReadOnly) {
            readOnlyIfPresent(a, readOnly, p, binds);
        }
        for (String state : List.of(c.airlockHome(), c.realHome() + "/.airlock")) {
            for (String f : Safety.hardDeniedAirlockFiles()) {
                readOnlyIfPresent(a, readOnly, Path.of(state, f), binds);
            }
        }
        c.shimDir().ifPresent(bin -> {
            if (Files.isDirectory(Path.of(bin))) {
                add(a, "--ro-bind", real(Path.of(bin)), real(Path.of(bin)));
            }
        });
        mounts.forEach(m -> m.seal(a));
        a.addAll(List.of("--unshare-pid", "--unshare-ipc", "--unshare-uts"));
        if (!s.network() && network.isEmpty()) {
            a.add("--unshare-net"); // not reached from LocalBackend (it always makes the anchor); never the host's network
        }
        // No capability inside, so a command run as root cannot unmount, remount or mount its way out
        // (umount /run, mount -o remount,rw /, umount -l /proc); a user namespace where the kernel
        // allows one also empties the bounding set. The session is already a new one without a
        // terminal (setsid runs bwrap), so no TIOCSTI reaches the caller's terminal; bwrap's own
        // --new-session would take the command out of the process group Airlock signals.
        a.addAll(List.of("--unshare-user-try", "--cap-drop", "ALL", "--die-with-parent"));
        a.add("--chdir");
        a.add(s.workdir().map(w -> real(Path.of(w)).toString()).orElse(c.home()));

        String description = "bwrap: read-only /, its own /run, /dev and /proc, /tmp a dir of its own kept until close;"
                + " the real home and /etc/shadow"
                + " hidden; writable: "
                + String.join(", ", writable.values()) + "; network "
                + (s.network() ? "on" : !s.allowlist().isEmpty()
                        ? "allowlist (a namespace of the environment's own, shared by its commands, reaching only "
                                + String.join(", ", s.allowlist().entries().stream().map(Object::toString).toList())
                                + " through slirp4netns and an nftables filter)"
                        : "off (a namespace of the environment's own, only its loopback, shared by its commands)");
        List<String> enter = network.map(NetworkAnchor::enter).orElse(List.of());
        Optional<Path> unshare = dev.airlock.spi.HostPrograms.onPath("unshare");
        Optional<Path> setpriv = dev.airlock.spi.HostPrograms.onPath("setpriv");
        List<String> frozen = frozenMounts(t.uid() == 0);
        if (unshare.isPresent() && setpriv.isPresent()) {
            // bwrap's init (pid 1) is the command's parent and reports its status. The shell gets a
            // user namespace of its own (no fork, same uid, the bounding set it refills emptied
            // again), so it cannot ptrace or write into that init; KILL and STOP to an init from
            // inside its pid namespace the kernel ignores. Mapping uid 0 takes CAP_SETFCAP.
            List<String> nested = new ArrayList<>(a);
            if (t.uid() == 0) {
                nested.addAll(List.of("--cap-add", "CAP_SETFCAP"));
            }
            List<String> nest = List.of(unshare.get().toString(), "--user", "--map-current-user", "--",
                    setpriv.get().toString(), "--bounding-set=-all", "--");
            Bubblewrap b = new Bubblewrap(bwrap, nested, nest, description + "; the command in a user namespace of its own",
                    frozen, enter);
            try {
                b.check();
                return b;
            } catch (BackendUnavailableException e) {
                description += "; the command's parent (bwrap's init) is within its reach, so it could change its"
                        + " exit status (a nested user namespace failed: " + e.getMessage() + ")";
            }
        } else {
            description += "; the command's parent (bwrap's init) is within its reach, so it could change its exit"
                    + " status (no unshare or setpriv on PATH: install util-linux)";
        }
        Bubblewrap b = new Bubblewrap(bwrap, a, List.of(), description, frozen, enter);
        b.check();
        return b;
    }

    /** Runs {@code true} in the sandbox once, so a kernel without user namespaces fails here, clearly. */
    private void check() {
        List<String> argv = argv("sh", "exit 0");
        try {
            Process p = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            byte[] err = p.getErrorStream().readNBytes(4096);
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new BackendUnavailableException("bubblewrap did not start a sandbox within 30 s");
            }
            if (p.exitValue() != 0) {
                String why = new String(err, StandardCharsets.UTF_8).strip();
                int nl = why.indexOf('\n');
                throw new BackendUnavailableException("bubblewrap cannot create its sandbox here ("
                        + (nl < 0 ? why : why.substring(0, nl)) + "); enable unprivileged user namespaces"
                        + " (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0), or set "
                        + LocalSettings.ISOLATION + "=none");
            }
        } catch (IOException e) {
            throw new BackendUnavailableException("cannot run " + bwrap + ": " + e.getMessage() + "; " + PACKAGE_HINT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendUnavailableException("interrupted while checking bubblewrap");
        }
    }

    /**
     * A read-only bind pins a directory or file, never a symbolic link: the bind lands on the link's
     * target, and the link itself stays an entry of a writable directory, so a command could remove
     * it and create a real {@code ~/.ssh} in its place (then write keys or an ssh config for the
     * next command). A credential path that is a link inside a writable bind is refused instead.
     */
    private static void refuseLinkedCredentials(Set<Path> homes, List<Path> binds) {
        List<Path> paths = new ArrayList<>();
        for (Path home : homes) {
            Safety.hardDeniedHomeDirs().forEach(name -> paths.add(home.resolve(name)));
            Safety.hardDeniedHomeFiles().forEach(name -> paths.add(home.resolve(name)));
        }
        refuseLinks(paths, binds, "write credentials there");
    }

    /**
     * The same for a checkout's git metadata: a linked {@code .git}, config or hooks dir could be
     * swapped for one whose config or hooks the host's git runs.
     */
    private static void refuseLinkedGitMetadata(Set<Path> checkouts, List<Path> binds) {
        List<Path> paths = new ArrayList<>();
        for (Path dir : checkouts) {
            paths.add(dir.resolve(".git"));
            GitMetadata.of(dir).forEach(pin -> paths.add(pin.path()));
        }
        refuseLinks(paths, binds, "leave a git config or hooks that the host's git would run");
    }

    private static void refuseLinks(List<Path> paths, List<Path> binds, String consequence) {
        for (Path p : paths) {
            if (Files.isSymbolicLink(p) && (under(p, binds) || binds.contains(p))) {
                String target;
                try {
                    target = Files.readSymbolicLink(p).toString();
                } catch (IOException e) {
                    target = "?";
                }
                throw new ConfigurationException("refusing to open: " + p + " is a symbolic link (to " + target
                        + ") inside a directory commands can write, so a command could replace it and " + consequence
                        + "; make it a real directory or file, or remove it");
            }
        }
    }

    private static void readOnlyIfPresent(List<String> a, Set<Path> done, Path p, List<Path> binds) {
        if (Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            Path r = real(p);
            if (under(r, binds) && done.add(r)) {
                add(a, "--ro-bind", r, r);
            }
        }
    }

    /**
     * Makes a missing placeholder (an empty 0600 file, or a 0755 dir) so it can be bound read-only;
     * false when the path is a link (never bound: the bind would land on its target) or cannot be made.
     */
    private static boolean ensureExists(Path p, boolean directory) {
        if (Files.isSymbolicLink(p)) {
            return false;
        }
        if (Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return true;
        }
        try {
            Files.createDirectories(p.getParent());
            if (directory) {
                Files.createDirectory(p);
            } else {
                Files.createFile(p, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void createParents(Path p) {
        try {
            Files.createDirectories(p.getParent());
        } catch (IOException e) {
            // left to bwrap, which reports it when it cannot create the path either
        }
    }

    private static boolean under(Path p, List<Path> binds) {
        for (Path w : binds) {
            if (p.startsWith(w) && !p.equals(w)) {
                return true;
            }
        }
        return false;
    }

    private static void add(List<String> a, String option, Path... paths) {
        a.add(option);
        for (Path p : paths) {
            a.add(p.toString());
        }
    }

    private static Path existing(String path, String what) {
        Path p = Path.of(path);
        if (!Files.isDirectory(p)) {
            throw new ConfigurationException(what + " " + path + " is not an existing directory; create it first,"
                    + " since " + LocalSettings.ISOLATION + "=bwrap binds it writable");
        }
        return real(p);
    }

    private static Path real(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }

    private static ConfigurationException refused(String what, String exposed) {
        return new ConfigurationException("bubblewrap refuses " + what + " as a writable bind: it would make " + exposed
                + " writable; start in a project directory or set " + LocalSettings.WORKDIR + " to one (or to none),"
                + " or choose " + LocalSettings.ISOLATION + "=none");
    }

    /** One mount of the sandbox's tree, laid out in depth order so a deeper one wins. */
    private record Mount(Path path, Kind kind) {
        enum Kind {
            /** Bound writable at the same path. */
            BIND,
            /** Bound read-only at the same path. */
            READ_ONLY,
            /** An empty tmpfs in its place, read-only once {@linkplain #seal sealed}. */
            HIDDEN
        }

        void addTo(List<String> a) {
            switch (kind) {
                case BIND -> add(a, "--bind", path, path);
                case READ_ONLY -> add(a, "--ro-bind", path, path);
                case HIDDEN -> add(a, "--tmpfs", path); // sealed read-only once the deeper mounts are made in it
            }
        }

        /** Makes a hidden one read-only, after every mount inside it (a read-only tmpfs takes no mount point). */
        void seal(List<String> a) {
            if (kind == Kind.HIDDEN) {
                add(a, "--remount-ro", path);
            }
        }
    }
}
