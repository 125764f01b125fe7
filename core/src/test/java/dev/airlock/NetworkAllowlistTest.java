package dev.airlock;

import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.OptionalInt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code airlock.network.allow.NAME}: parsed strictly, each mistake one line naming its key. */
class NetworkAllowlistTest {

    private static NetworkAllowlist of(String... kv) {
        return NetworkAllowlist.from(Settings.of(kv));
    }

    @Test
    void rangesAddressesHostsAndPortsAreRead() {
        NetworkAllowlist a = of("airlock.network.allow.corp", "10.0.0.0/8", "airlock.network.allow.one", " 203.0.113.7:443 ",
                "airlock.network.allow.npm", "Registry.npmjs.org", "airlock.network.allow.wild", "*.example.com:8080");
        assertEquals(List.of(
                new NetworkAllowlist.Entry("corp", "10.0.0.0/8", true, OptionalInt.empty()),
                new NetworkAllowlist.Entry("npm", "registry.npmjs.org", false, OptionalInt.empty()),
                new NetworkAllowlist.Entry("one", "203.0.113.7/32", true, OptionalInt.of(443)),
                new NetworkAllowlist.Entry("wild", "*.example.com", false, OptionalInt.of(8080))), a.entries());
        assertTrue(of().isEmpty());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "10.1.2.3/8 | airlock.network.allow.x=10.1.2.3/8 has bits set past its /8; write 10.0.0.0/8 for the range, or the address alone",
            "10.0.0.256 | airlock.network.allow.x=10.0.0.256: 256 is not an octet (0-255)",
            "10.0.0.0/33 | airlock.network.allow.x=10.0.0.0/33: /33 is not a prefix length (0-32)",
            "10.0.0 | airlock.network.allow.x=10.0.0 is not an IPv4 address or range (like 10.0.0.0/8 or 203.0.113.7)",
            "example.com:0 | airlock.network.allow.x=example.com:0: the port '0' is not a number from 1 to 65535",
            "example.com:http | airlock.network.allow.x=example.com:http: the port 'http' is not a number from 1 to 65535",
            "2001:db8::/32 | airlock.network.allow.x=2001:db8::/32 looks like IPv6, which the allowlist does not take; give an IPv4 address or range, or a host name",
            "exa mple.com | airlock.network.allow.x=exa mple.com is not a host name, an IPv4 address or a range (like registry.npmjs.org, *.example.com or 10.0.0.0/8)",
    })
    void aMalformedEntryIsOneLineNamingItsKey(String value, String message) {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> of("airlock.network.allow.x", value));
        assertEquals(message, e.getMessage());
    }

    @Test
    void theWholeRangeAndAnAddressAreRanges() {
        assertEquals(List.of("0.0.0.0/0", "127.0.0.1/32"), of("airlock.network.allow.a", "0.0.0.0/0",
                "airlock.network.allow.b", "127.0.0.1").rangesOnly("modal"));
    }

    @Test
    void whatAServiceCannotExpressIsRefusedNeverWidened() {
        ConfigurationException port = assertThrows(ConfigurationException.class,
                () -> of("airlock.network.allow.web", "203.0.113.7:443").rangesOnly("modal"));
        assertEquals("airlock.network.allow.web=203.0.113.7/32:443: the modal backend's allowlist takes IPv4 addresses and"
                + " ranges on every port (like 10.0.0.0/8), not a port", port.getMessage());
        ConfigurationException host = assertThrows(ConfigurationException.class,
                () -> of("airlock.network.allow.npm", "registry.npmjs.org").rangesOnly("daytona"));
        assertEquals("airlock.network.allow.npm=registry.npmjs.org: the daytona backend's allowlist takes IPv4 addresses and"
                + " ranges on every port (like 10.0.0.0/8), not a host name", host.getMessage());
        assertEquals(2, of("airlock.network.allow.npm", "registry.npmjs.org", "airlock.network.allow.c", "10.0.0.0/8")
                .onEveryPort("vercel", true).size());
        ConfigurationException vport = assertThrows(ConfigurationException.class,
                () -> of("airlock.network.allow.npm", "registry.npmjs.org:443").onEveryPort("vercel", true));
        assertTrue(vport.getMessage().endsWith("the vercel backend's allowlist takes host names and IPv4 ranges on every port (like 10.0.0.0/8), not a port"),
                vport.getMessage());
    }
}
