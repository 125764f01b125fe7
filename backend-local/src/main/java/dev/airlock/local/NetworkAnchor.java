package dev.airlock.local;

import dev.airlock.BackendUnavailableException;
import dev.airlock.NetworkMode;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * One environment's own network under {@code airlock.network=off}: a network namespace holding
 * only a loopback that is up, shared by every command of the environment, so a server one command
 * starts answers the next one (and, through a {@link LoopbackForward}, the host), while nothing
 * outside the namespace is reachable from it: not the host's loopback, no other address (there is
 * no route but the loopback's).
 *
 * <p>Why an anchor process: bubblewrap's {@code --unshare-net} gives each launch a namespace of its
 * own that ends with it. Here {@code unshare --net} makes the namespace once, at open; a short
 * script brings its loopback up, prints a ready line and becomes {@code cat}, reading a pipe from
 * this JVM. It is kept for the environment's life and ended at {@link #close()} by its pid (and
 * if this JVM dies without closing, the pipe ends and so does {@code cat}). It runs in a session of
 * its own, so a terminal's Ctrl-C to this JVM's group does not end it under a running environment.
 *
 * <p>As root the anchor is in the host's user namespace and commands join its network with
 * {@code nsenter --net}. Not root (or root without CAP_SYS_ADMIN, as in a container), a network
 * namespace can only be made and entered inside a user namespace of one's own: the anchor makes
 * one mapping this user to itself ({@code --keep-caps}, so the script may bring the loopback up)
 * and commands enter it too ({@code nsenter --user --preserve-credentials}); bubblewrap then nests
 * its own user namespace under it as it always does, and every capability is dropped before the
 * command. The anchor's {@code cat} keeps its capabilities there, which reach that namespace only.
 *
 * <p>Why entered through this JVM's descriptors and not the anchor's pid: at start this class
 * opens the anchor's namespace files and keeps them open, and every {@link #enter} names them as
 * {@code /proc/JVM/fd/N}. A namespace lives while a descriptor holds it, so even if the anchor died
 * and its pid were reused by a process on the host's network, no command could join the host's
 * network by mistake.
 *
 * <p>Commands cannot reach the anchor: each runs in a pid namespace of its own (bubblewrap's),
 * where neither the anchor nor a relay is visible; other environments have other anchors.
 *
 * <p>Under {@code airlock.network=allowlist} the same namespace gets a way out: before its ready
 * line the setup script loads the {@link AllowlistFilter}'s nftables rules (it holds the namespace's
 * capabilities; no command has run yet, and none could load rules: bubblewrap's user namespace,
 * nested below, owns nothing of this network namespace and every capability is dropped), then this
 * JVM attaches a {@link SlirpLink} and writes the hosts file commands see. Close ends the link, then
 * the anchor.
 */
final class NetworkAnchor implements AutoCloseable {
    private static final String READY = "airlock-network-ready";
    /**
     * Run as the namespace's first process: the loopback up (iproute2's {@code ip}, else busybox's),
     * then the ready line, then {@code cat} for the environment's life.
     */
    private static final String SETUP = String.join("\n",
            "PATH=$PATH:/usr/sbin:/sbin",
            "if command -v ip >/dev/null 2>&1; then ip link set lo up; else busybox ip link set lo up; fi || exit 97",
            // $1: an allowlist's rules (none with the network off); $2 non-empty: 127.0.0.1 ports are rewritten off the loopback
            "if [ -n \"$1\" ]; then printf '%s' \"$1\" | nft -f - || exit 96; fi",
            "if [ -n \"$2\" ]; then echo 1 >/proc/sys/net/ipv4/conf/all/route_localnet || exit 95; fi",
            "echo " + READY,
            "exec cat >/dev/null");

    private final Process anchor;
    private final boolean ownUserNamespace;
    /** The namespace files this JVM holds open (network, then user when not root). */
    private final List<FileInputStream> held;
    /** {@code /proc/JVM/fd/N} of {@link #held}, in the same order. */
    private final List<String> paths;
    /** Set before the descriptors close: their numbers may then name other files. */
    private volatile boolean closed;
    /** Under an allowlist: the way out, and the hosts file commands see. */
    private volatile SlirpLink link;
    private volatile Path hosts;

    private NetworkAnchor(Process anchor, boolean ownUserNamespace, List<FileInputStream> held, List<String> paths) {
        this.anchor = anchor;
        this.ownUserNamespace = ownUserNamespace;
        this.held = held;
        this.paths = paths;
    }

    /**
     * Makes the namespace with {@code filter}'s rules loaded before its ready line, then attaches
     * slirp4netns and writes the hosts file.
     *
     * @throws BackendUnavailableException when the namespace, its rules or its link cannot be made here
     */
    static NetworkAnchor start(boolean root, AllowlistFilter filter) {
        tool("nft", NetworkMode.ALLOWLIST); // refused by name now, not as the setup script's "not found"
        NetworkAnchor n = start(root, Optional.of(filter));
        try {
            n.hosts = Files.createTempFile("airlock-hosts-", "");
            Files.writeString(n.hosts, filter.hostsFile(), StandardCharsets.UTF_8);
            // world-readable like the /etc/hosts it stands for: a command's program may drop to another user
            Files.setPosixFilePermissions(n.hosts, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
            n.link = SlirpLink.start(n.paths.get(0), n.ownUserNamespace ? Optional.of(n.paths.get(1)) : Optional.empty(),
                    filter.reachesHostLoopback());
            return n;
        } catch (IOException e) {
            n.close();
            throw unavailable(NetworkMode.ALLOWLIST, e.getMessage());
        } catch (RuntimeException e) {
            n.close();
            throw e;
        }
    }

    /**
     * Makes the namespace and waits for its loopback to be up.
     *
     * @param root whether this JVM runs as uid 0: then the namespace is made in the host's user
     *             namespace, and where that is not allowed (root without CAP_SYS_ADMIN, as in a
     *             container) in a user namespace of its own, as for any other user
     * @throws BackendUnavailableException when the namespace cannot be made here (one line, what to do)
     */
    static NetworkAnchor start(boolean root) {
        return start(root, Optional.empty());
    }

    private static NetworkAnchor start(boolean root, Optional<AllowlistFilter> filter) {
        NetworkMode mode = filter.isPresent() ? NetworkMode.ALLOWLIST : NetworkMode.OFF;
        tool("nsenter", mode); // every command needs it: refused now rather than at the first exec
        if (root) {
            try {
                return launch(false, filter);
            } catch (BackendUnavailableException e) {
                // no CAP_SYS_ADMIN on the host's user namespace: a user namespace of its own, below
            }
        }
        return launch(true, filter);
    }

    private static NetworkAnchor launch(boolean ownUserNamespace, Optional<AllowlistFilter> filter) {
        NetworkMode mode = filter.isPresent() ? NetworkMode.ALLOWLIST : NetworkMode.OFF;
        List<String> argv = new ArrayList<>();
        dev.airlock.spi.HostPrograms.onPath("setsid").ifPresent(s -> argv.add(s.toString()));
        argv.add(tool("unshare", mode));
        if (ownUserNamespace) {
            argv.addAll(List.of("--user", "--map-current-user", "--keep-caps"));
        }
        argv.addAll(List.of("--net", "--", "/bin/sh", "-c", SETUP, "airlock-network",
                filter.map(AllowlistFilter::ruleset).orElse(""),
                filter.filter(AllowlistFilter::reachesHostLoopback).map(f -> "rewrite").orElse("")));
        Process p;
        try {
            p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw unavailable(mode, e.getMessage());
        }
        StringBuilder said = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.equals(READY)) {
                    return hold(p, ownUserNamespace, mode);
                }
                if (said.length() < 500) {
                    said.append(said.length() == 0 ? "" : " ").append(line.strip());
                }
            }
        } catch (IOException e) {
            said.append(e.getMessage());
        }
        end(p);
        throw unavailable(mode, said.length() == 0 ? "unshare exited " + exit(p) : said.toString());
    }

    /** Opens the anchor's namespace files, so they outlive any confusion about its pid. */
    private static NetworkAnchor hold(Process p, boolean ownUserNamespace, NetworkMode mode) {
        List<FileInputStream> held = new ArrayList<>();
        List<String> paths = new ArrayList<>();
        try {
            for (String ns : ownUserNamespace ? List.of("net", "user") : List.of("net")) {
                Path file = Path.of("/proc", Long.toString(p.pid()), "ns", ns);
                String identity = Files.readSymbolicLink(file).toString();
                FileInputStream in = new FileInputStream(file.toFile());
                held.add(in);
                if (!p.isAlive() || !identity.equals(Files.readSymbolicLink(file).toString())) {
                    throw new IOException("the anchor ended while its namespaces were being opened");
                }
                paths.add(descriptorOf(identity));
            }
            return new NetworkAnchor(p, ownUserNamespace, held, paths);
        } catch (IOException e) {
            held.forEach(NetworkAnchor::closeQuietly);
            end(p);
            throw unavailable(mode, e.getMessage());
        }
    }

    /** The {@code /proc/JVM/fd/N} of a descriptor this JVM holds on the namespace {@code identity} ({@code net:[123]}). */
    private static String descriptorOf(String identity) throws IOException {
        Path fds = Path.of("/proc/self/fd");
        try (DirectoryStream<Path> all = Files.newDirectoryStream(fds)) {
            for (Path fd : all) {
                try {
                    if (Files.readSymbolicLink(fd).toString().equals(identity)) {
                        return "/proc/" + ProcessHandle.current().pid() + "/fd/" + fd.getFileName();
                    }
                } catch (IOException e) {
                    // a descriptor closed meanwhile (the directory listing's own, another thread's)
                }
            }
        }
        throw new IOException("no descriptor of this JVM holds " + identity);
    }

    /**
     * The argv prefix that runs what follows in this namespace: {@code nsenter --net=...}, with the
     * anchor's user namespace too when not root (this user keeps its uid there).
     */
    List<String> enter() {
        List<String> a = new ArrayList<>(List.of(tool("nsenter", NetworkMode.OFF), "--net=" + paths.get(0)));
        if (ownUserNamespace) {
            a.addAll(List.of("--user=" + paths.get(1), "--preserve-credentials"));
        }
        a.add("--");
        return a;
    }

    /** Whether processes entering run in the anchor's user namespace (not root), rather than the host's. */
    boolean ownUserNamespace() {
        return ownUserNamespace;
    }

    /** The anchor's pid, as this host sees it. */
    long pid() {
        return anchor.pid();
    }

    /** Whether {@link #close} was called: {@link #enter} no longer names this namespace. */
    boolean closed() {
        return closed;
    }

    /** Under an allowlist, the hosts file bubblewrap binds at {@code /etc/hosts}; empty with the network off. */
    Optional<Path> hosts() {
        return Optional.ofNullable(hosts);
    }

    /** Under an allowlist, slirp4netns's pid; empty with the network off. */
    OptionalLong linkPid() {
        SlirpLink l = link;
        return l == null ? OptionalLong.empty() : OptionalLong.of(l.pid());
    }

    /** Ends the link and the anchor (by their pids) and lets go of the namespace; idempotent. */
    @Override
    public void close() {
        closed = true;
        SlirpLink l = link;
        if (l != null) {
            l.close();
        }
        end(anchor);
        held.forEach(NetworkAnchor::closeQuietly);
        Path h = hosts;
        if (h != null) {
            try {
                Files.deleteIfExists(h);
            } catch (IOException e) {
                // a temp file of a few lines; the OS's temp cleaning takes it
            }
        }
    }

    private static void end(Process p) {
        p.destroyForcibly();
        try {
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(FileInputStream in) {
        try {
            in.close();
        } catch (IOException e) {
            // a namespace file: nothing more to free
        }
    }

    private static String exit(Process p) {
        try {
            return p.waitFor(5, TimeUnit.SECONDS) ? Integer.toString(p.exitValue()) : "not yet";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "not yet";
        }
    }

    private static String tool(String name, NetworkMode mode) {
        String from = name.equals("nft") ? "nftables' nft" : "util-linux's " + name;
        return dev.airlock.spi.HostPrograms.find(name).map(Path::toString).orElseThrow(() -> new BackendUnavailableException(NetworkMode.KEY
                + "=" + mode.label() + " under bubblewrap needs " + from + " on PATH for the environment's own network; install "
                + (name.equals("nft") ? "nftables" : "util-linux")));
    }

    private static BackendUnavailableException unavailable(NetworkMode mode, String why) {
        return new BackendUnavailableException(NetworkMode.KEY + "=" + mode.label() + " cannot make the environment's own network"
                + " here (" + why.strip().replace('\n', ' ') + "); " + (mode == NetworkMode.ALLOWLIST
                ? "the kernel must allow network namespaces and nftables in them; open with " + NetworkMode.KEY + "=off, or use the docker backend"
                : "enable user namespaces (user.max_user_namespaces > 0), or open with " + NetworkMode.KEY + "=on"));
    }
}
