package dev.airlock.docker;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.NetworkMode;
import dev.airlock.settings.Settings;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code airlock.network=allowlist} on dockerd: two servers on the bridge's gateway (this machine's
 * docker0 address, reachable from its containers and nowhere else), one named by the list and one
 * not. Needs root, nsenter and nft here (the rules are written from the host).
 */
@ExtendWith(DockerFixture.class)
class DockerAllowlistTest {
    private static final String LISTED = "airlock-listed-server\n";
    private static final String UNLISTED = "airlock-unlisted-server\n";

    private final List<ServerSocket> servers = new ArrayList<>();
    private final AtomicInteger unlistedConnections = new AtomicInteger();
    private String gateway;
    private ServerSocket listed;
    private ServerSocket unlisted;

    @BeforeEach
    void servers() throws Exception {
        Services.requireProgram("nsenter", "util-linux");
        Services.requireProgram("nft", "nftables");
        Services.require(Files.readAllLines(Path.of("/proc/self/status")).stream()
                .anyMatch(l -> l.matches("Uid:\\s+\\d+\\s+0\\s.*")), "the allowlist is written as root (nsenter): run the tests as root");
        DockerFixture.Result r = DockerFixture.docker(null, 30, "network", "inspect", "bridge", "--format",
                "{{range .IPAM.Config}}{{.Gateway}} {{end}}");
        gateway = r.out().trim().split(" ")[0];
        assertTrue(gateway.matches("\\d+\\.\\d+\\.\\d+\\.\\d+"), "the bridge's gateway: " + r.out() + r.err());
        listed = server(LISTED, new AtomicInteger());
        unlisted = server(UNLISTED, unlistedConnections);
    }

    @AfterEach
    void stop() throws IOException {
        NamespaceFirewall.nftForTests = null;
        for (ServerSocket s : servers) {
            s.close();
        }
    }

    /** A server on the gateway address answering {@code bytes} to each connection, counting them. */
    private ServerSocket server(String bytes, AtomicInteger connections) throws IOException {
        ServerSocket s = new ServerSocket(0, 50, InetAddress.getByName(gateway));
        servers.add(s);
        Thread t = new Thread(() -> {
            while (!s.isClosed()) {
                try (Socket c = s.accept()) {
                    connections.incrementAndGet();
                    c.getOutputStream().write(bytes.getBytes(StandardCharsets.UTF_8));
                } catch (IOException e) {
                    // closed
                }
            }
        }, "allowlist-test-server");
        t.setDaemon(true);
        t.start();
        return s;
    }

    private Settings allowlist(String... extra) {
        List<String> kv = new ArrayList<>(List.of(NetworkMode.KEY, "allowlist", "airlock.network.allow.listed",
                gateway + ":" + listed.getLocalPort()));
        kv.addAll(List.of(extra));
        return DockerFixture.settings(kv.toArray(String[]::new));
    }

    private static ExecResult run(Environment env, String script) {
        return env.exec(ExecRequest.builder(script).timeout(Duration.ofSeconds(60)).build());
    }

    private String connect(ServerSocket to) {
        return "nc " + gateway + " " + to.getLocalPort() + " </dev/null";
    }

    /**
     * A connection made into the container (a peer on the bridge: here this machine) is dropped
     * unless to a published port, though a server listens there: otherwise a cooperating peer
     * would hold a channel both ways with a command, replies the output rules let through.
     */
    @Test
    void aConnectionIntoTheContainerIsDroppedThoughAServerListens() throws Exception {
        try (Environment env = Environments.open(allowlist())) {
            dev.airlock.Execution server = env.start(ExecRequest.of("exec nc -ll -p 7000 -e echo inside"));
            try {
                long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                String inside = "";
                while (!inside.equals("inside\n") && System.nanoTime() < end) {
                    inside = run(env, "nc 127.0.0.1 7000 </dev/null").stdout().text();
                }
                assertEquals("inside\n", inside, "the server answers inside the container");
                String ip = run(env, "hostname -i").stdout().text().trim().split(" ")[0];
                assertTrue(ip.matches("\\d+\\.\\d+\\.\\d+\\.\\d+"), ip);
                IOException refused = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, () -> {
                    try (Socket c = new Socket()) {
                        c.connect(new java.net.InetSocketAddress(ip, 7000), 3000);
                        c.setSoTimeout(3000);
                        c.getInputStream().read();
                    }
                }, "a connection into the container at " + ip + ":7000 got through");
                assertTrue(refused.getMessage() != null, String.valueOf(refused));
            } finally {
                server.cancel();
            }
        }
    }

    @Test
    void theListedServerAnswersAndTheOtherIsUnreachable() {
        String id;
        try (Environment env = Environments.open(allowlist())) {
            id = DockerBackend.of(env).containerId();
            ExecResult yes = run(env, connect(listed));
            assertEquals(LISTED, yes.stdout().text(), "the listed server must answer; stderr: " + yes.stderr().text());
            ExecResult no = run(env, connect(unlisted));
            assertFalse(no.timedOut(), "connecting to the unlisted server must fail at once");
            assertNotEquals(0, no.exitCode(), "connecting to the unlisted server must fail: " + no.stdout().text());
            assertFalse(no.stdout().text().contains(UNLISTED.strip()), no.stdout().text());
            assertEquals(0, unlistedConnections.get(), "the unlisted server was reached");
            assertTrue(no.stderr().text().contains("No route to host"), no.stderr().text());
            // The container's own loopback stays open; DNS is not on the list.
            ExecResult dns = run(env, "nameserver=$(sed -n 's/^nameserver //p' /etc/resolv.conf | head -n 1);"
                    + " nslookup example.com \"$nameserver\"");
            assertNotEquals(0, dns.exitCode(), "DNS must not be reachable: " + dns.stdout().text());
        }
        assertContainerGone(id);
    }

    @Test
    void rootInTheContainerCannotUndoTheRules() {
        // The host's own nft and iptables, run inside through its loader (the test image has neither).
        try (Environment env = Environments.open(allowlist(DockerSettings.VOLUMES, "/usr:/host/usr:ro"))) {
            String lib = "/host/usr/lib/x86_64-linux-gnu";
            String host = lib + "/ld-linux-x86-64.so.2 --library-path " + lib + " ";
            ExecResult undo = run(env, "id -u; " + host + "/host/usr/sbin/nft flush ruleset; echo nft=$?;"
                    + host + "/host/usr/sbin/xtables-nft-multi iptables -P OUTPUT ACCEPT; echo iptables=$?;"
                    + " ip route add " + gateway + "/32 dev eth0; echo route=$?; ip link set eth0 down; echo link=$?;"
                    + connect(unlisted) + "; echo nc=$?");
            String out = undo.stdout().text();
            assertTrue(out.startsWith("0\n"), "the command must run as root in the container: " + out);
            assertTrue(out.contains("nft=1") && out.contains("route=") && !out.contains("route=0") && !out.contains("link=0"),
                    "root in the container changed its network: " + out + undo.stderr().text());
            assertFalse(out.contains(UNLISTED.strip()), out);
            assertTrue(out.contains("nc=1"), out);
            assertEquals(0, unlistedConnections.get(), "the unlisted server was reached after the hostile command");
        }
    }

    @Test
    void doctorReportsWhatTheCheckFromInsideFound() {
        try (Environment env = Environments.open(allowlist())) {
            dev.airlock.containment.DoctorReport report = dev.airlock.containment.Doctor.report(env, allowlist());
            assertTrue(report.isolation().matches(".*verified: " + Pattern.quote(gateway) + ":\\d+ \\(not on the list; this machine listened there\\) was"
                    + " unreachable from inside container .*No route to host.*"), report.isolation());
            dev.airlock.containment.DoctorReport.Row network = report.row("network").orElseThrow();
            assertEquals(dev.airlock.containment.DoctorReport.Verdict.CONTAINED_ENFORCED, network.verdict(), network.evidence());
            assertTrue(network.evidence().contains("checked from outside: " + gateway + ":"), network.evidence());
            assertTrue(report.toText().contains("this machine listened there) was unreachable from inside container"), report.toText());
        }
    }

    @Test
    void aHostNameResolvesInsideThroughEtcHosts() throws Exception {
        // This machine's name: resolvable here, unknown to a container (whose own name is its id).
        String name = InetAddress.getLocalHost().getHostName().toLowerCase(java.util.Locale.ROOT);
        String ip = InetAddress.getByName(name).getHostAddress();
        Services.require(!name.equals("localhost") && ip.matches("[0-9.]+"), "this machine's name (" + name
                + ") is not a host name with an IPv4 address to test with");
        try (Environment env = Environments.open(allowlist("airlock.network.allow.named", name + ":9"))) {
            ExecResult hosts = run(env, "grep -F -x -- \"$0\" /etc/hosts".replace("$0", ip + "\t" + name));
            assertEquals(0, hosts.exitCode(), "the container's /etc/hosts must map " + name + " to " + ip + ": "
                    + run(env, "cat /etc/hosts").stdout().text());
        }
    }

    @Test
    void aContainerKeptByUpHasTheRulesToo() throws Exception {
        DockerProvider provider = new DockerProvider();
        String id = provider.up(allowlist(), Duration.ZERO);
        try {
            DockerFixture.Result yes = DockerFixture.docker(null, 60, "exec", id, "sh", "-c", connect(listed));
            assertEquals(LISTED, yes.out(), "the listed server must answer in the kept container: " + yes.err());
            DockerFixture.Result no = DockerFixture.docker(null, 60, "exec", id, "sh", "-c", connect(unlisted));
            assertNotEquals(0, no.exit(), "the unlisted server must be out of reach in the kept container: " + no.out());
            assertEquals(0, unlistedConnections.get(), "the unlisted server was reached from the kept container");
        } finally {
            provider.down(allowlist(), id);
        }
        assertContainerGone(id);
    }

    @Test
    void rulesThatCannotBeWrittenRemoveTheContainer() throws Exception {
        Path failing = Files.createTempFile("airlock-failing-nft", ".sh");
        try {
            Files.writeString(failing, "#!/bin/sh\necho 'Error: refused by the test' >&2\nexit 1\n");
            failing.toFile().setExecutable(true);
            NamespaceFirewall.nftForTests = failing;
            AirlockException e = assertThrows(AirlockException.class, () -> Environments.open(allowlist()).close());
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
            Matcher m = Pattern.compile("into container ([0-9a-f]{12})'s network failed \\(nft exit 1\\): Error: refused by the test;"
                    + " the container was removed").matcher(e.getMessage());
            assertTrue(m.find(), e.getMessage());
            assertContainerGone(m.group(1));
        } finally {
            Files.deleteIfExists(failing);
        }
    }

    @Test
    void settingsThatCannotBeEnforcedAreOneLineEach() {
        String[][] cases = {
                {DockerSettings.NETWORK, "host", "needs the default bridge, not airlock.docker.network=host"},
                {DockerSettings.NETWORK, "none", "needs the default bridge, not airlock.docker.network=none"},
                {DockerSettings.RUNTIME, "runsc", "needs the runc runtime, not airlock.docker.runtime=runsc"},
                {DockerSettings.CONTAINER, "some-container", "not one attached with airlock.docker.container"},
                {"airlock.network.allow.wild", "*.example.com", "airlock.network.allow.wild=*.example.com: the docker backend"
                        + " resolves host names at open and keeps DNS closed"},
                {"airlock.network.allow.nowhere", "no-such-host.invalid", "no-such-host.invalid does not resolve to an IPv4 address"},
        };
        for (String[] c : cases) {
            ConfigurationException e = assertThrows(ConfigurationException.class,
                    () -> Environments.open(allowlist(c[0], c[1])).close(), c[0] + "=" + c[1]);
            assertTrue(e.getMessage().contains(c[2]) && !e.getMessage().contains("\n"), c[0] + "=" + c[1] + ": " + e.getMessage());
        }
    }

    private static void assertContainerGone(String id) {
        try {
            DockerFixture.Result r = DockerFixture.docker(null, 30, "inspect", "--format", "{{.Id}}", id);
            assertNotEquals(0, r.exit(), "container " + id + " is still there");
        } catch (IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
