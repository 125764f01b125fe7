package dev.airlock.docker;

import dev.airlock.BackendException;
import dev.airlock.ConfigurationException;
import dev.airlock.NetworkAllowlist;
import dev.airlock.NetworkMode;
import dev.airlock.settings.Settings;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code airlock.network=allowlist} on docker: a packet filter in the container's own network
 * namespace, written from the host before any command runs.
 *
 * <p>Why this mechanism. The container is on Docker's default bridge, so it has a network namespace
 * of its own, and it never holds {@code CAP_NET_ADMIN} (every capability is dropped but the four
 * file ones, see {@code DockerDaemon.CAPS_KEPT}, with no-new-privileges): its root can neither
 * change nor flush nftables or iptables rules, routes or links in that namespace. Without
 * {@code CAP_NET_RAW} it cannot open a packet socket either, the one way round the IP hooks. So
 * the rules are written by the host's root, entering only the namespace's network
 * ({@code nsenter -t PID -n nft -f -}, the host's own nft binary, never one from the image), after
 * the container starts and before the control shell, the probe or any command: the only process
 * that ran in between is Airlock's keepalive. A sidecar with {@code --cap-add NET_ADMIN} sharing the
 * namespace was not chosen: it needs an image with nft in it, and a second container to lose.
 *
 * <p>The rules: output is dropped by default (and rejected, so a command fails at once rather than
 * hang), accepting the loopback, replies of established connections, and each entry (its range, or
 * its addresses with the host name resolved here at open; one port when given, tcp and udp).
 * Names resolve inside through {@code /etc/hosts} lines the create adds ({@code --add-host}), so
 * DNS stays closed: a resolver reachable from inside would be a channel out for any bytes. Only
 * the default bridge is taken: a user-defined network has Docker's embedded DNS on the loopback,
 * the same channel.
 *
 * <p>Where it cannot be enforced it is refused in one line at open, never weakened: the daemon
 * must be this machine's (a {@code unix://} socket whose containers' processes this JVM sees), the
 * JVM must run as root, nsenter and nft must be installed, the runtime must be Docker's default
 * (gVisor's runsc sends from its own network stack over a packet socket the host's hooks never
 * see), and an attached container is refused (its rules are not ours to know).
 */
final class NamespaceFirewall {
    /** The table Airlock writes in the container's namespace. */
    static final String TABLE = "airlock";
    private static final Duration TOOL_BOUND = Duration.ofSeconds(30);
    /** The nft to run instead of the one found (tests make the write fail with it); null: the one found. */
    static volatile Path nftForTests;

    /** One allowed destination: a range, and the port if one was given. */
    record Allowed(String cidr, OptionalInt port, String key) {
    }

    /**
     * What the container gets.
     *
     * @param allowed    the destinations, host names resolved
     * @param extraHosts {@code NAME:IP} for the create's {@code /etc/hosts}
     */
    record Plan(List<Allowed> allowed, List<String> extraHosts, List<Integer> published) {
    }

    /** The runtimes whose containers send through the host kernel's stack, where the rules are: runc, crun, and podman's "oci". */
    static final java.util.Set<String> KERNEL_NETWORK_RUNTIMES = java.util.Set.of("runc", "io.containerd.runc.v2", "crun", "oci");

    private NamespaceFirewall() {
    }

    /**
     * The plan for these settings, or empty when {@code airlock.network} is not allowlist; one line
     * when this daemon or these settings cannot enforce it. Host names are resolved here.
     */
    static Optional<Plan> plan(Settings settings, DockerSettings docker) {
        if (NetworkMode.from(settings) != NetworkMode.ALLOWLIST) {
            return Optional.empty();
        }
        String refused = "airlock.network=allowlist on docker ";
        if (docker.container().isPresent()) {
            throw new ConfigurationException(refused + "is enforced only in a container Airlock creates, not one attached with "
                    + DockerSettings.CONTAINER + " (its rules are not ours to know); unset " + DockerSettings.CONTAINER);
        }
        if (!docker.network().equals("bridge")) {
            throw new ConfigurationException(refused + "needs the default bridge, not " + DockerSettings.NETWORK + "="
                    + docker.network() + " (none, host and container: share or cut the namespace; a user-defined network's"
                    + " DNS would be a channel out); unset " + DockerSettings.NETWORK);
        }
        if (docker.runtime().filter(r -> !r.equals("runc")).isPresent()) {
            throw new ConfigurationException(refused + "needs the runc runtime, not " + DockerSettings.RUNTIME + "="
                    + docker.runtime().get() + " (its own network stack sends past the host's packet filter); unset "
                    + DockerSettings.RUNTIME);
        }
        whyNotEnforceable(docker).ifPresent(why -> {
            throw new ConfigurationException(refused + why);
        });
        List<Allowed> allowed = new ArrayList<>();
        List<String> hosts = new ArrayList<>();
        for (NetworkAllowlist.Entry e : NetworkAllowlist.from(settings).entries()) {
            if (e.cidr()) {
                allowed.add(new Allowed(e.destination(), e.port(), e.key()));
                continue;
            }
            for (String ip : resolve(e)) {
                allowed.add(new Allowed(ip + "/32", e.port(), e.key()));
                hosts.add(e.destination() + ":" + ip);
            }
        }
        return Optional.of(new Plan(allowed, hosts, List.copyOf(docker.ports())));
    }

    /** A host name's IPv4 addresses, resolved by this JVM; one line when it has none. */
    private static List<String> resolve(NetworkAllowlist.Entry e) {
        if (e.destination().startsWith("*.")) {
            throw new ConfigurationException(e.key() + "=" + e + ": the docker backend resolves host names at open and"
                    + " keeps DNS closed, so a wildcard names no address; list the hosts, or give an IPv4 range");
        }
        List<String> out = new ArrayList<>();
        try {
            for (InetAddress a : InetAddress.getAllByName(e.destination())) {
                if (a instanceof Inet4Address && !out.contains(a.getHostAddress())) {
                    out.add(a.getHostAddress());
                }
            }
        } catch (UnknownHostException ex) {
            // reported below
        }
        if (out.isEmpty()) {
            throw new ConfigurationException(e.key() + "=" + e + ": " + e.destination() + " does not resolve to an IPv4"
                    + " address here (the docker backend resolves names at open); check the name, or give an IPv4 address or range");
        }
        return out;
    }

    /**
     * Why this JVM cannot write rules into the daemon's containers, or empty when it can: the
     * daemon is local, this JVM is root, and the tools are here.
     */
    static Optional<String> whyNotEnforceable(DockerSettings docker) {
        if (!"unix".equals(docker.host().getScheme())) {
            return Optional.of("needs the daemon on this machine, and " + docker.host() + " is remote (the rules are written"
                    + " from the daemon's host into the container's network namespace); run Airlock on that host with its"
                    + " unix:// socket, or use airlock.network=off");
        }
        if (!runsAsRoot()) {
            return Optional.of("needs Airlock to run as root (nsenter into the container's network namespace to write its"
                    + " rules); run it as root, or use airlock.network=off");
        }
        if (dev.airlock.spi.HostPrograms.find("nsenter").isEmpty()) {
            return Optional.of("needs nsenter on this machine (apt-get install util-linux), or use airlock.network=off");
        }
        if (dev.airlock.spi.HostPrograms.find("nft").isEmpty()) {
            return Optional.of("needs nft on this machine (apt-get install nftables), or use airlock.network=off");
        }
        return Optional.empty();
    }

    /**
     * The nftables rules for the plan: one table, its output chain dropping all but the plan, and
     * its input chain dropping every connection made into the container but to a published port
     * (replies to the container's own connections pass): a peer on the bridge (another container)
     * could otherwise hold a channel both ways with a command that the output rules never see
     * start.
     */
    static String ruleset(Plan plan) {
        StringBuilder b = new StringBuilder();
        b.append("table inet ").append(TABLE).append(" {\n");
        b.append("  chain input {\n");
        b.append("    type filter hook input priority 0; policy drop;\n");
        b.append("    iifname \"lo\" accept\n");
        b.append("    ct state established,related accept\n");
        for (int port : plan.published()) {
            b.append("    tcp dport ").append(port).append(" accept\n");
        }
        b.append("  }\n");
        b.append("  chain output {\n");
        b.append("    type filter hook output priority 0; policy drop;\n");
        b.append("    oifname \"lo\" accept\n");
        b.append("    ct state established,related accept\n");
        for (Allowed a : plan.allowed()) {
            if (a.port().isPresent()) {
                for (String proto : List.of("tcp", "udp")) {
                    b.append("    ip daddr ").append(a.cidr()).append(' ').append(proto).append(" dport ")
                            .append(a.port().getAsInt()).append(" accept\n");
                }
            } else {
                b.append("    ip daddr ").append(a.cidr()).append(" accept\n");
            }
        }
        // What the policy would drop, refused at once: a command sees "No route to host" rather than hang.
        b.append("    reject with icmpx type admin-prohibited\n");
        b.append("  }\n");
        b.append("}\n");
        return b.toString();
    }

    /**
     * Writes the plan's rules into the network namespace of the container whose first process is
     * {@code pid}, and reads them back. One line when that process is not this container's (a
     * daemon in another pid namespace) or nft fails.
     */
    static void enforce(Plan plan, long pid, String containerId) {
        String cid = DockerDaemon.shortId(containerId);
        String cgroup;
        try {
            cgroup = Files.readString(Path.of("/proc", Long.toString(pid), "cgroup"));
        } catch (IOException e) {
            cgroup = "";
        }
        // The process's cgroup names its container: else the pid is another pid namespace's (a daemon elsewhere).
        if (pid <= 0 || !cgroup.contains(containerId)) {
            throw new BackendException("airlock.network=allowlist: the process " + pid + " of container " + cid
                    + " is not visible on this machine, so its network cannot be filtered; run Airlock where the daemon"
                    + " runs; the container was removed");
        }
        // Never the host's network: a rule set written there would cut this machine off (a mistake upstream, a
        // network mode that shares a namespace, must not come to that).
        String net = namespace(Path.of("/proc", Long.toString(pid), "ns", "net"));
        if (net.isEmpty() || net.equals(namespace(Path.of("/proc/self/ns/net"))) || net.equals(namespace(Path.of("/proc/1/ns/net")))) {
            throw new BackendException("airlock.network=allowlist: container " + cid + " does not have a network namespace"
                    + " of its own (" + (net.isEmpty() ? "unreadable" : net) + "), so no rules were written; the container was removed");
        }
        Result put = run(List.of(tool("nsenter"), "-t", Long.toString(pid), "-n", tool("nft"), "-f", "-"), ruleset(plan));
        if (put.exit != 0) {
            throw new BackendException("airlock.network=allowlist: writing the rules into container " + cid + "'s network"
                    + " failed (nft exit " + put.exit + "): " + firstLine(put.err) + "; the container was removed");
        }
        Result back = run(List.of(tool("nsenter"), "-t", Long.toString(pid), "-n", tool("nft"), "list", "table", "inet", TABLE), "");
        if (back.exit != 0 || !back.out.contains("policy drop")) {
            throw new BackendException("airlock.network=allowlist: the rules in container " + cid + "'s network did not read"
                    + " back (" + firstLine(back.err) + "); the container was removed");
        }
    }

    /**
     * From inside the container's network namespace, connects to a listener this JVM holds on the
     * bridge's gateway at a port the list does not name: the line for {@code doctor} when nothing
     * arrived; a {@link BackendException} when the connection arrived (the rules do not hold).
     * Empty when there is nothing to check with (no bash here for its {@code /dev/tcp}, or the
     * list names the gateway on every port).
     */
    static Optional<String> verify(Plan plan, long pid, String gateway, String containerId) {
        if (gateway == null || gateway.isBlank()) {
            return Optional.empty();
        }
        InetAddress address;
        try {
            address = InetAddress.getByName(gateway);
        } catch (IOException e) {
            return Optional.empty();
        }
        try {
            return dev.airlock.spi.AllowlistCheck.unlistedUnreachable(address, gateway,
                    List.of(tool("nsenter"), "-t", Long.toString(pid), "-n", "--"), port -> covers(plan, gateway, port),
                    "container " + DockerDaemon.shortId(containerId));
        } catch (BackendException leaked) {
            throw new BackendException(leaked.getMessage() + "; the container was removed");
        }
    }

    /** A namespace link's target ({@code net:[4026531833]}), or empty when it cannot be read. */
    private static String namespace(Path link) {
        try {
            return Files.readSymbolicLink(link).toString();
        } catch (IOException | UnsupportedOperationException e) {
            return "";
        }
    }

    /** Whether the plan lets {@code ip:port} through. */
    static boolean covers(Plan plan, String ip, int port) {
        long address = toLong(ip);
        for (Allowed a : plan.allowed()) {
            String[] parts = a.cidr().split("/");
            int prefix = Integer.parseInt(parts[1]);
            long mask = prefix == 0 ? 0 : (0xFFFFFFFFL << (32 - prefix)) & 0xFFFFFFFFL;
            if ((address & mask) == (toLong(parts[0]) & mask) && (a.port().isEmpty() || a.port().getAsInt() == port)) {
                return true;
            }
        }
        return false;
    }

    private static long toLong(String ip) {
        long v = 0;
        for (String octet : ip.split("\\.")) {
            v = (v << 8) | Integer.parseInt(octet);
        }
        return v;
    }

    /** Whether this process's effective uid is 0 (read from /proc, as the JDK has no call for it). */
    private static boolean runsAsRoot() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    String[] ids = line.substring(4).trim().split("\\s+");
                    return ids.length > 1 && ids[1].equals("0");
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    private static String tool(String name) {
        Path nft = nftForTests;
        if (name.equals("nft") && nft != null) {
            return nft.toString();
        }
        return dev.airlock.spi.HostPrograms.find(name).map(Path::toString).orElse(name);
    }

    private record Result(int exit, String out, String err) {
    }

    /** Runs a host tool with {@code stdin}, bounded; its output in full. */
    private static Result run(List<String> argv, String stdin) {
        Process p;
        try {
            p = new ProcessBuilder(argv).start();
        } catch (IOException e) {
            return new Result(127, "", e.getMessage());
        }
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
        try (OutputStream in = p.getOutputStream()) {
            in.write(stdin.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // the tool ended early; its exit says why
        }
        try {
            if (!p.waitFor(TOOL_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor();
                return new Result(124, out.join(), argv.get(argv.size() > 4 ? 4 : 0) + " did not finish in " + TOOL_BOUND.toSeconds() + "s");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            return new Result(130, "", "interrupted");
        }
        return new Result(p.exitValue(), out.join(), err.join());
    }

    private static String read(InputStream in) {
        try (in) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            in.transferTo(b);
            return b.toString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static String firstLine(String s) {
        String t = s.strip();
        int nl = t.indexOf('\n');
        return nl < 0 ? t : t.substring(0, nl);
    }
}
