package dev.airlock;

import dev.airlock.settings.Settings;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The destinations {@code airlock.network=allowlist} lets commands reach, one per
 * {@code airlock.network.allow.NAME=HOST-OR-CIDR[:PORT]}: an IPv4 address or CIDR range
 * ({@code 10.0.0.0/8}, {@code 203.0.113.7}), or a host name ({@code registry.npmjs.org},
 * {@code *.example.com}), each with an optional port. Everything else is out of reach.
 *
 * <p>Parsed strictly, with one line per mistake: a range with host bits set is refused with the
 * range it probably meant (a service would widen or refuse it, and either surprises), and an IPv6
 * entry is refused (no supported service takes one).
 */
public record NetworkAllowlist(List<Entry> entries) {
    /** The family of keys, {@code airlock.network.allow.NAME}. */
    public static final String PREFIX = "airlock.network.allow";

    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})(?:/(\\d{1,2}))?");
    private static final Pattern HOST = Pattern.compile("(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*");

    public NetworkAllowlist {
        entries = List.copyOf(entries);
    }

    /**
     * One destination.
     *
     * @param name        the {@code NAME} of its key
     * @param destination an IPv4 range as {@code A.B.C.D/N} (an address is {@code /32}), or a host name
     * @param cidr        whether {@code destination} is a range (else a host name)
     * @param port        the one port allowed there; empty: every port
     */
    public record Entry(String name, String destination, boolean cidr, OptionalInt port) {
        /** The key that set it, for messages. */
        public String key() {
            return PREFIX + "." + name;
        }

        @Override
        public String toString() {
            return destination + (port.isPresent() ? ":" + port.getAsInt() : "");
        }
    }

    /** The entries set in {@code settings} (none: an empty list); a malformed one is one line naming its key. */
    public static NetworkAllowlist from(Settings settings) {
        List<Entry> out = new ArrayList<>();
        for (Map.Entry<String, String> e : settings.keys(PREFIX).entrySet()) {
            out.add(parse(e.getKey(), e.getValue().trim()));
        }
        return new NetworkAllowlist(out);
    }

    static Entry parse(String name, String value) {
        String key = PREFIX + "." + name;
        if (value.isEmpty()) {
            throw new ConfigurationException(key + " is empty; give a host name or an IPv4 address or range, like 10.0.0.0/8 or registry.npmjs.org:443");
        }
        if (value.indexOf(':') != value.lastIndexOf(':') || value.startsWith("[")) {
            throw new ConfigurationException(key + "=" + value + " looks like IPv6, which the allowlist does not take; give an IPv4 address or range, or a host name");
        }
        String host = value;
        OptionalInt port = OptionalInt.empty();
        int colon = value.lastIndexOf(':');
        if (colon >= 0) {
            host = value.substring(0, colon);
            String p = value.substring(colon + 1);
            int n;
            try {
                n = Integer.parseInt(p);
            } catch (NumberFormatException ex) {
                n = -1;
            }
            if (n < 1 || n > 65535) {
                throw new ConfigurationException(key + "=" + value + ": the port '" + p + "' is not a number from 1 to 65535");
            }
            port = OptionalInt.of(n);
        }
        Matcher m = IPV4.matcher(host);
        if (m.matches()) {
            return new Entry(name, range(key, value, m), true, port);
        }
        if (host.matches("[0-9./]+")) {
            throw new ConfigurationException(key + "=" + value + " is not an IPv4 address or range (like 10.0.0.0/8 or 203.0.113.7)");
        }
        if (host.length() > 253 || !HOST.matcher(host).matches()) {
            throw new ConfigurationException(key + "=" + value + " is not a host name, an IPv4 address or a range (like registry.npmjs.org, *.example.com or 10.0.0.0/8)");
        }
        return new Entry(name, host.toLowerCase(java.util.Locale.ROOT), false, port);
    }

    private static String range(String key, String value, Matcher m) {
        long address = 0;
        for (int i = 1; i <= 4; i++) {
            int octet = Integer.parseInt(m.group(i));
            if (octet > 255) {
                throw new ConfigurationException(key + "=" + value + ": " + octet + " is not an octet (0-255)");
            }
            address = (address << 8) | octet;
        }
        int prefix = m.group(5) == null ? 32 : Integer.parseInt(m.group(5));
        if (prefix > 32) {
            throw new ConfigurationException(key + "=" + value + ": /" + prefix + " is not a prefix length (0-32)");
        }
        long mask = prefix == 0 ? 0 : (0xFFFFFFFFL << (32 - prefix)) & 0xFFFFFFFFL;
        if ((address & ~mask & 0xFFFFFFFFL) != 0) {
            throw new ConfigurationException(key + "=" + value + " has bits set past its /" + prefix + "; write "
                    + dotted(address & mask) + "/" + prefix + " for the range, or the address alone");
        }
        return dotted(address) + "/" + prefix;
    }

    private static String dotted(long a) {
        return ((a >> 24) & 255) + "." + ((a >> 16) & 255) + "." + ((a >> 8) & 255) + "." + (a & 255);
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /**
     * The entries, for a service whose allowlist names destinations on every port: IPv4 ranges,
     * and host names where {@code takesHosts} (Vercel's {@code allow} domains; Modal's
     * {@code cidr_allowlist} and Daytona's {@code networkAllowList} take ranges only). An entry
     * the service cannot express is one line naming it, the backend and what it takes: never
     * widened to something the user did not ask for.
     */
    public List<Entry> onEveryPort(String backend, boolean takesHosts) {
        for (Entry e : entries) {
            if (e.port().isPresent() || (!e.cidr() && !takesHosts)) {
                throw new ConfigurationException(e.key() + "=" + e + ": the " + backend + " backend's allowlist takes "
                        + (takesHosts ? "host names and IPv4 ranges" : "IPv4 addresses and ranges") + " on every port"
                        + " (like 10.0.0.0/8), not " + (e.port().isPresent() ? "a port" : "a host name"));
            }
        }
        return entries;
    }

    /** {@link #onEveryPort} for a service that takes IPv4 ranges only: their {@code A.B.C.D/N} forms. */
    public List<String> rangesOnly(String backend) {
        return onEveryPort(backend, false).stream().map(Entry::destination).toList();
    }
}
