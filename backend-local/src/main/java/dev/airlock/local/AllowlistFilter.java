package dev.airlock.local;

import dev.airlock.ConfigurationException;
import dev.airlock.NetworkAllowlist;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code airlock.network=allowlist} on the local backend, as the packet filter the
 * {@link NetworkAnchor} loads into the environment's own network namespace before any command runs:
 * an nftables ruleset whose output and forward policies drop, and which accepts only the loopback,
 * replies to connections it accepted, and each destination of the list (with its port, tcp and udp,
 * when one is given). A packet the list does not name is answered at once (a reset, or an
 * administratively-prohibited ICMP) so a command fails fast instead of hanging.
 *
 * <p><b>Host names</b> are resolved here, in this JVM, at open: a name that does not resolve to an
 * IPv4 address is one line, and the addresses found are the ones allowed. Commands find those names
 * in a generated {@code /etc/hosts} ({@link #hostsFile()}, bound by bubblewrap), and DNS itself is
 * not allowed through the filter (nor answered by slirp4netns, started with {@code --disable-dns}):
 * a resolver the sandbox could query would be a channel out for any data a command encodes into
 * names it looks up, allowlist or not. A wildcard ({@code *.example.com}) names no address that can
 * be resolved in advance, so it is refused.
 *
 * <p><b>The host's loopback</b> is written as the host sees it, {@code 127.0.0.1:PORT}, one port at a
 * time: such an entry rewrites connections to {@code 127.0.0.1:PORT} in the namespace to
 * {@code 10.0.2.2:PORT}, which slirp4netns relays to the host's {@code 127.0.0.1:PORT}; every other
 * port of the sandbox's own loopback stays its own. Slirp4netns's own network ({@code 10.0.2.0/24}:
 * the host's loopback at {@code .2}, its DNS at {@code .3}) is refused to every packet that did not
 * come through such a rewrite, so a range like {@code 10.0.0.0/8} does not open the host's loopback.
 * A loopback range, or the loopback without a port, would take the sandbox's own loopback away and
 * is refused.
 */
final class AllowlistFilter {
    /** Slirp4netns's network: the namespace is {@code .100}, the host's loopback {@code .2}, its DNS {@code .3}. */
    static final String SLIRP_NETWORK = "10.0.2.0/24";
    /** Where slirp4netns relays to the host's {@code 127.0.0.1}. */
    static final String HOST_LOOPBACK = "10.0.2.2";
    private static final String LOOPBACK = "127.0.0.1";

    /** A destination range and its port (empty: every port). */
    private record Allowed(String range, OptionalInt port) {
    }

    /** How this machine resolves a name (a test may stand in). */
    interface Resolver {
        InetAddress[] resolve(String name) throws UnknownHostException;
    }

    private final List<Allowed> allowed;
    /** Ports of the host's loopback the list names, as {@code 127.0.0.1:PORT}. */
    private final Set<Integer> hostLoopbackPorts;
    /** Each listed host name and the IPv4 addresses it resolved to here. */
    private final Map<String, List<String>> names;

    private AllowlistFilter(List<Allowed> allowed, Set<Integer> hostLoopbackPorts, Map<String, List<String>> names) {
        this.allowed = List.copyOf(allowed);
        this.hostLoopbackPorts = Set.copyOf(hostLoopbackPorts);
        this.names = Map.copyOf(names);
    }

    static AllowlistFilter of(NetworkAllowlist list) {
        return of(list, InetAddress::getAllByName);
    }

    /** Resolves every host name of {@code list}; a mistake is one line naming its key. */
    static AllowlistFilter of(NetworkAllowlist list, Resolver resolver) {
        List<Allowed> allowed = new ArrayList<>();
        Set<Integer> hostLoopback = new TreeSet<>();
        Map<String, List<String>> names = new LinkedHashMap<>();
        for (NetworkAllowlist.Entry e : list.entries()) {
            List<String> ranges = new ArrayList<>();
            if (e.cidr()) {
                ranges.add(e.destination());
            } else {
                if (e.destination().startsWith("*.")) {
                    throw new ConfigurationException(e.key() + "=" + e + ": the local backend resolves host names at open,"
                            + " and a wildcard names no address it can resolve; list each host name, or its IPv4 range");
                }
                List<String> found = resolve(e, resolver);
                names.put(e.destination(), found);
                found.forEach(a -> ranges.add(a + "/32"));
            }
            for (String range : ranges) {
                if (within(range, SLIRP_NETWORK)) {
                    throw new ConfigurationException(e.key() + "=" + e + ": " + range + " is inside " + SLIRP_NETWORK
                            + ", slirp4netns's own network for the environment, which no command reaches; name the host's"
                            + " loopback as " + LOOPBACK + ":PORT, or use another backend to reach that address");
                }
                if (!range.startsWith("127.")) {
                    allowed.add(new Allowed(range, e.port()));
                } else if (range.equals(LOOPBACK + "/32") && e.port().isPresent()) {
                    hostLoopback.add(e.port().getAsInt());
                } else {
                    throw new ConfigurationException(e.key() + "=" + e + ": the local backend reaches the host's loopback"
                            + " one port at a time, as " + LOOPBACK + ":PORT (a loopback range, or one without a port,"
                            + " would take the sandbox's own loopback away); name the port, like " + LOOPBACK + ":5432");
                }
            }
        }
        return new AllowlistFilter(allowed, hostLoopback, names);
    }

    private static List<String> resolve(NetworkAllowlist.Entry e, Resolver resolver) {
        InetAddress[] all;
        try {
            all = resolver.resolve(e.destination());
        } catch (UnknownHostException ex) {
            throw new ConfigurationException(e.key() + "=" + e + ": " + e.destination() + " does not resolve on this machine;"
                    + " correct the name, or give its IPv4 address or range");
        }
        Set<String> v4 = new LinkedHashSet<>();
        for (InetAddress a : all) {
            if (a instanceof Inet4Address) {
                v4.add(a.getHostAddress());
            }
        }
        if (v4.isEmpty()) {
            throw new ConfigurationException(e.key() + "=" + e + ": " + e.destination() + " has no IPv4 address here, and the"
                    + " allowlist is IPv4 only; give an IPv4 address or range");
        }
        return List.copyOf(v4);
    }

    /** Whether an entry lets commands reach {@code ip} (IPv4) on {@code port}. */
    boolean names(String ip, int port) {
        for (Allowed a : allowed) {
            if (within(ip + "/32", a.range()) && (a.port().isEmpty() || a.port().getAsInt() == port)) {
                return true;
            }
        }
        return false;
    }

    /** Whether the IPv4 range {@code inner} (A.B.C.D/N) lies wholly inside {@code outer}. */
    static boolean within(String inner, String outer) {
        String[] i = inner.split("/");
        String[] o = outer.split("/");
        int ip = Integer.parseInt(i[1]);
        int op = Integer.parseInt(o[1]);
        if (ip < op) {
            return false;
        }
        long mask = op == 0 ? 0 : (0xFFFFFFFFL << (32 - op)) & 0xFFFFFFFFL;
        return (toLong(i[0]) & mask) == (toLong(o[0]) & mask);
    }

    private static long toLong(String ip) {
        long v = 0;
        for (String octet : ip.split("\\.")) {
            v = (v << 8) | Integer.parseInt(octet);
        }
        return v;
    }

    /** Whether some entry names a port of the host's loopback (slirp4netns must then relay to it). */
    boolean reachesHostLoopback() {
        return !hostLoopbackPorts.isEmpty();
    }

    /**
     * The nftables ruleset ({@code nft -f -}). A packet's first match decides: the rewritten
     * host-loopback ports, the loopback, replies; then slirp4netns's own network refused; then each
     * destination; then a refusal for everything else, under a drop policy for what slips past.
     */
    String ruleset() {
        StringBuilder out = new StringBuilder();
        out.append("table inet airlock {\n");
        out.append("  chain output {\n    type filter hook output priority 0; policy drop;\n");
        if (reachesHostLoopback()) {
            String ports = ports();
            out.append("    ct status dnat ip daddr ").append(HOST_LOOPBACK).append(" tcp dport ").append(ports).append(" accept\n");
            out.append("    ct status dnat ip daddr ").append(HOST_LOOPBACK).append(" udp dport ").append(ports).append(" accept\n");
        }
        out.append("    oif lo accept\n");
        out.append("    ct state established,related accept\n");
        // Off the loopback, 127/8 is never a destination (route_localnet is on for the rewrite above).
        out.append("    ip daddr 127.0.0.0/8 reject with icmpx type admin-prohibited\n");
        out.append("    ip daddr ").append(SLIRP_NETWORK).append(" meta l4proto tcp reject with tcp reset\n");
        out.append("    ip daddr ").append(SLIRP_NETWORK).append(" reject with icmpx type admin-prohibited\n");
        for (Allowed a : allowed) {
            if (a.port().isPresent()) {
                out.append("    ip daddr ").append(a.range()).append(" tcp dport ").append(a.port().getAsInt()).append(" accept\n");
                out.append("    ip daddr ").append(a.range()).append(" udp dport ").append(a.port().getAsInt()).append(" accept\n");
            } else {
                out.append("    ip daddr ").append(a.range()).append(" accept\n");
            }
        }
        out.append("    meta l4proto tcp reject with tcp reset\n");
        out.append("    reject with icmpx type admin-prohibited\n");
        out.append("  }\n");
        out.append("  chain forward {\n    type filter hook forward priority 0; policy drop;\n  }\n");
        out.append("}\n");
        if (reachesHostLoopback()) {
            String ports = ports();
            out.append("table ip airlock_nat {\n");
            out.append("  chain output {\n    type nat hook output priority -100; policy accept;\n");
            out.append("    ip daddr ").append(LOOPBACK).append(" tcp dport ").append(ports).append(" dnat to ").append(HOST_LOOPBACK).append('\n');
            out.append("    ip daddr ").append(LOOPBACK).append(" udp dport ").append(ports).append(" dnat to ").append(HOST_LOOPBACK).append('\n');
            out.append("  }\n");
            out.append("  chain postrouting {\n    type nat hook postrouting priority 100; policy accept;\n");
            out.append("    oif != lo ip saddr 127.0.0.0/8 masquerade\n");
            out.append("  }\n");
            out.append("}\n");
        }
        return out.toString();
    }

    private String ports() {
        return "{ " + String.join(", ", hostLoopbackPorts.stream().map(String::valueOf).toList()) + " }";
    }

    /** The {@code /etc/hosts} commands see: the loopback's names and each listed host name's addresses. */
    String hostsFile() {
        StringBuilder out = new StringBuilder("# airlock.network=allowlist: the listed names, resolved at open; no DNS inside\n");
        out.append("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n");
        names.forEach((name, addresses) -> addresses.forEach(a -> out.append(a).append('\t').append(name).append('\n')));
        return out.toString();
    }

    /** For the sandbox's description: what is allowed, in the list's own words. */
    String describe() {
        List<String> all = new ArrayList<>();
        allowed.forEach(a -> all.add(a.range() + (a.port().isPresent() ? ":" + a.port().getAsInt() : "")));
        hostLoopbackPorts.forEach(p -> all.add("the host's " + LOOPBACK + ":" + p));
        return String.join(", ", all);
    }
}
