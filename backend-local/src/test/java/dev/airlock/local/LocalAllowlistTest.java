package dev.airlock.local;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.NetworkAllowlist;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

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
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code airlock.network=allowlist} on the local backend, enforced inside the environment's own
 * network namespace (an nftables filter loaded by the anchor, slirp4netns as the way out): two
 * servers on this host's loopback, each answering its own bytes; the one the list names answers a
 * command, the other stays out of reach, also after a command running as root tries to undo the
 * rules; close leaves neither the anchor nor slirp4netns running; a list the backend cannot enforce
 * is one line at open.
 */
class LocalAllowlistTest {
    private static final Settings BWRAP = Settings.of("airlock.container", "no", "airlock.local.isolation", "bwrap",
            "airlock.local.workdir", "none", "airlock.network", "allowlist");
    private static final String LISTED = "listed-server-bytes";
    private static final String UNLISTED = "unlisted-server-bytes";

    private final List<ServerSocket> servers = new ArrayList<>();
    private int listed;
    private int unlisted;

    @BeforeEach
    void servers() throws IOException {
        listed = serve(LISTED);
        unlisted = serve(UNLISTED);
    }

    @AfterEach
    void closeServers() throws IOException {
        for (ServerSocket s : servers) {
            s.close();
        }
    }

    private static void requireTools() {
        BubblewrapRequirement.require();
        Services.requireProgram("slirp4netns", "slirp4netns");
        Services.requireProgram("nft", "nftables");
        Path tun = Path.of("/dev/net/tun");
        Services.require(Files.isReadable(tun) && Files.isWritable(tun), "slirp4netns needs a /dev/net/tun this user can"
                + " open (here: " + (Files.exists(tun) ? "not this user's to open" : "none") + ")");
    }

    /** A server on this host's 127.0.0.1 sending {@code bytes} to whoever connects; its port. */
    private int serve(String bytes) throws IOException {
        return serve(bytes, InetAddress.getLoopbackAddress());
    }

    private int serve(String bytes, InetAddress at) throws IOException {
        ServerSocket server = new ServerSocket(0, 50, at);
        servers.add(server);
        Thread t = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket c = server.accept()) {
                    c.getOutputStream().write((bytes + "\n").getBytes(StandardCharsets.UTF_8));
                } catch (IOException e) {
                    // closed, or a client that went away
                }
            }
        }, "allowlist-test-server");
        t.setDaemon(true);
        t.start();
        return server.getLocalPort();
    }

    private static Environment open(Map<String, String> allow) {
        return new LocalProvider().open(OpenContext.of(settings(allow)));
    }

    private static Settings settings(Map<String, String> allow) {
        Settings s = BWRAP;
        for (Map.Entry<String, String> e : allow.entrySet()) {
            s = s.with(NetworkAllowlist.PREFIX + "." + e.getKey(), e.getValue());
        }
        return s;
    }

    /** Connects to HOST:PORT with bash's /dev/tcp and prints what the server sends. */
    private static String connect(String host, int port) {
        return "bash -c 'exec 3<>\"/dev/tcp/$0/$1\" && head -c 64 <&3' " + host + " " + port;
    }

    private static ExecResult run(Environment env, String script) {
        return env.exec(ExecRequest.builder(script).timeout(Duration.ofSeconds(60)).build());
    }

    private static void assertOutOfReach(Environment env, String host, int port, String why) {
        ExecResult r = run(env, connect(host, port));
        String said = r.stdout().text() + r.stderr().text();
        assertFalse(said.contains(UNLISTED), why + ": " + host + ":" + port + " answered: " + said);
        assertFalse(r.timedOut(), why + ": the connection to " + host + ":" + port + " neither failed nor succeeded");
        assertTrue(r.exitCode() != 0, why + ": connecting to " + host + ":" + port + " must fail, got exit 0: " + said);
    }

    @Test
    void theListedHostServerAnswersAndTheOtherIsOutOfReach() {
        requireTools();
        // 10.0.0.0/8 holds slirp4netns's own network: it must not open the host's loopback (10.0.2.2).
        try (Environment env = open(Map.of("db", "127.0.0.1:" + listed, "corp", "10.0.0.0/8"))) {
            ExecResult r = run(env, connect("127.0.0.1", listed));
            assertEquals(LISTED + "\n", r.stdout().text(), "the listed server must answer; stderr: " + r.stderr().text());
            assertOutOfReach(env, "127.0.0.1", unlisted, "a host port the list does not name");
            assertOutOfReach(env, AllowlistFilter.HOST_LOOPBACK, unlisted, "slirp4netns's name for the host's loopback");
            assertOutOfReach(env, AllowlistFilter.HOST_LOOPBACK, listed, "the host's loopback by slirp4netns's name, not rewritten");
        }
    }

    /**
     * A destination off slirp4netns's network, by address and port: this machine's own non-loopback
     * address (the kernel delivers to it locally; nothing leaves the machine), one port listed and
     * one not. The unlisted one is refused by the filter's last rules alone.
     */
    @Test
    void anAddressAndPortOnTheListAnswersAndAnotherPortThereDoesNot() throws IOException {
        requireTools();
        InetAddress own = ownAddress();
        int open = serve(LISTED, own);
        int closed = serve(UNLISTED, own);
        try (Environment env = open(Map.of("lan", own.getHostAddress() + ":" + open))) {
            ExecResult r = run(env, connect(own.getHostAddress(), open));
            assertEquals(LISTED + "\n", r.stdout().text(), "the listed address and port must answer; stderr: " + r.stderr().text());
            assertOutOfReach(env, own.getHostAddress(), closed, "a port the list does not name at a listed address");
        }
    }

    /** An IPv4 address of this machine other than the loopback (the test skips where there is none). */
    private static InetAddress ownAddress() throws IOException {
        for (java.net.NetworkInterface i : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
            if (i.isUp() && !i.isLoopback()) {
                for (InetAddress a : java.util.Collections.list(i.getInetAddresses())) {
                    if (a instanceof java.net.Inet4Address && !a.getHostAddress().startsWith("10.0.2.")) {
                        return a;
                    }
                }
            }
        }
        Services.require(false, "this machine has no IPv4 address but the loopback's");
        throw new IllegalStateException();
    }

    /** {@code expose} relays into the environment's own loopback under an allowlist as with the network off. */
    @Test
    void anExposedPortServesTheHostThroughTheFilter() throws Exception {
        requireTools();
        Services.require(dev.airlock.spi.HostPrograms.onPath("busybox").isPresent(), "busybox is not installed (its httpd serves the port)");
        try (Environment env = open(Map.of("db", "127.0.0.1:" + listed))) {
            String dir = env.target().scratchDir() + "/www";
            env.files().mkdirs(dir);
            env.files().write(dir + "/served.txt", "served in the allowlisted sandbox".getBytes(StandardCharsets.UTF_8));
            env.start(ExecRequest.of("exec busybox httpd -f -p 127.0.0.1:8080 -h " + dir));
            run(env, "until busybox wget -q -O /dev/null http://127.0.0.1:8080/served.txt 2>/dev/null; do sleep 0.1; done");
            java.net.URI url = env.ports().expose(8080);
            assertEquals("served in the allowlisted sandbox", new String(dev.airlock.tck.Http.fetch(url.resolve("/served.txt"),
                    Duration.ofSeconds(30)), StandardCharsets.UTF_8));
        }
    }

    @Test
    void aRootCommandCannotUndoTheRules() {
        requireTools();
        try (Environment env = open(Map.of("db", "127.0.0.1:" + listed))) {
            String undo = "PATH=$PATH:/usr/sbin:/sbin\n"
                    + "nft flush ruleset; echo nft=$?\n"
                    + "iptables -P OUTPUT ACCEPT; iptables -F; echo iptables=$?\n"
                    + "ip route replace default via 10.0.2.2 dev tap0; echo route=$?\n"
                    + "echo 0 >/proc/sys/net/ipv4/conf/all/route_localnet; echo sysctl=$?\n"
                    + "id -u\n";
            ExecResult r = run(env, undo);
            assertTrue(r.stdout().text().contains("nft="), "the undoing script did not run: " + r.stdout().text() + r.stderr().text());
            assertTrue(r.stdout().text().endsWith("\n0\n"), "the command must be root in its sandbox to mean anything: "
                    + r.stdout().text());
            assertOutOfReach(env, AllowlistFilter.HOST_LOOPBACK, unlisted, "after a command tried to flush the rules");
            assertOutOfReach(env, "127.0.0.1", unlisted, "after a command tried to flush the rules");
            ExecResult again = run(env, connect("127.0.0.1", listed));
            assertEquals(LISTED + "\n", again.stdout().text(), "the listed server must still answer: the rules are the"
                    + " anchor's, not the command's; its attempt said: " + r.stdout().text() + r.stderr().text()
                    + "; the connection said: " + again.stderr().text());
        }
    }

    @Test
    void closeLeavesNeitherTheAnchorNorSlirpRunning() {
        requireTools();
        long anchor;
        long link;
        try (Environment env = open(Map.of("db", "127.0.0.1:" + listed))) {
            NetworkAnchor n = OpenContext.backendOf(env, LocalBackend.class).flatMap(LocalBackend::networkAnchor).orElseThrow();
            anchor = n.pid();
            link = n.linkPid().orElseThrow();
            assertTrue(ProcessHandle.of(anchor).isPresent() && ProcessHandle.of(link).isPresent(), "both run while the environment is open");
        }
        assertFalse(ProcessHandle.of(anchor).map(ProcessHandle::isAlive).orElse(false), "the anchor " + anchor + " outlived close");
        assertFalse(ProcessHandle.of(link).map(ProcessHandle::isAlive).orElse(false), "slirp4netns " + link + " outlived close");
    }

    /** slirp4netns parses every packet a command sends out: where it can, it filters its own system calls too. */
    @Test
    void slirpFiltersItsOwnSystemCallsWhereItWasBuiltToDoSo() throws Exception {
        requireTools();
        String binary = dev.airlock.spi.HostPrograms.find("slirp4netns").orElseThrow().toString();
        Services.require(SlirpLink.seccomp(binary), "this slirp4netns was built without libseccomp (its --version names none)");
        try (Environment env = open(Map.of("db", "127.0.0.1:" + listed))) {
            long link = OpenContext.backendOf(env, LocalBackend.class).flatMap(LocalBackend::networkAnchor).orElseThrow()
                    .linkPid().orElseThrow();
            String status = Files.readString(Path.of("/proc", Long.toString(link), "status"));
            assertTrue(status.lines().anyMatch(l -> l.equals("Seccomp:\t2")),
                    "slirp4netns " + link + " runs without a seccomp filter: " + status.lines().filter(l -> l.startsWith("Seccomp")).toList());
            assertEquals(LISTED + "\n", run(env, connect("127.0.0.1", listed)).stdout().text(), "the listed server still answers through it");
        }
    }

    @Test
    void doctorCallsTheFilterEnforcedOnTheCheckFromOutsideNotOnTheProbesWord() {
        requireTools();
        Services.require(LocalBackend.ownAddress().isPresent(), "the check at open needs an IPv4 address of this machine's"
                + " other than the loopback's, and it has none");
        // A host loopback port on the list: slirp4netns relays 10.0.2.2, so only the filter keeps the doctor's server out.
        Settings s = settings(Map.of("db", "127.0.0.1:" + listed));
        dev.airlock.containment.DoctorReport r;
        try (Environment env = new LocalProvider().open(OpenContext.of(s))) {
            r = dev.airlock.containment.Doctor.report(env, s);
        }
        dev.airlock.containment.DoctorReport.Row row = r.row("network").orElseThrow();
        assertEquals(dev.airlock.containment.DoctorReport.Verdict.CONTAINED_ENFORCED, row.verdict(), r.toText());
        // The check connects to one of this machine's own addresses, which slirp4netns carries out like any.
        assertTrue(row.evidence().matches(".*checked from outside: \\d+\\.\\d+\\.\\d+\\.\\d+:\\d+ \\(not on the list; this"
                + " machine listened there\\) was unreachable from inside the environment's network namespace: .*"), r.toText());
    }

    @Test
    void aListTheBackendCannotEnforceIsOneLineAtOpen() {
        requireTools();
        Map<String, String> cases = Map.of(
                "*.example.com", "airlock.network.allow.x=*.example.com: the local backend resolves host names at open,",
                "127.0.0.0/8", "airlock.network.allow.x=127.0.0.0/8: the local backend reaches the host's loopback one port at a time",
                "127.0.0.1", "airlock.network.allow.x=127.0.0.1/32: the local backend reaches the host's loopback one port at a time",
                "10.0.2.2:80", "airlock.network.allow.x=10.0.2.2/32:80: 10.0.2.2/32 is inside 10.0.2.0/24, slirp4netns's own network");
        cases.forEach((value, start) -> {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> open(Map.of("x", value)).close());
            assertTrue(e.getMessage().startsWith(start) && !e.getMessage().contains("\n"), e.getMessage());
        });
        ConfigurationException none = assertThrows(ConfigurationException.class, () -> open(Map.of()).close());
        assertTrue(none.getMessage().startsWith("airlock.network=allowlist names no destination"), none.getMessage());
    }

    @Test
    void aListedNameIsAllowedAtTheAddressesItResolvedToAndCommandsFindItInTheirHostsFile() {
        NetworkAllowlist list = NetworkAllowlist.from(Settings.of(NetworkAllowlist.PREFIX + ".reg", "registry.example:443"));
        AllowlistFilter f = AllowlistFilter.of(list, name -> new InetAddress[] {InetAddress.getByAddress(name, new byte[] {(byte) 203, 0, 113, 9})});
        assertTrue(f.hostsFile().contains("203.0.113.9\tregistry.example\n"), f.hostsFile());
        assertTrue(f.ruleset().contains("ip daddr 203.0.113.9/32 tcp dport 443 accept"), f.ruleset());
        requireTools();
        try (Environment env = open(Map.of("db", "localhost:" + listed))) {
            ExecResult hosts = run(env, "cat /etc/hosts");
            assertTrue(hosts.stdout().text().startsWith("# airlock.network=allowlist"), "commands must see the generated hosts file: "
                    + hosts.stdout().text() + hosts.stderr().text());
            assertEquals(LISTED + "\n", run(env, connect("localhost", listed)).stdout().text(), "localhost:PORT on the list is the host's port");
        }
    }

    @Test
    void aNameThatDoesNotResolveIsOneLine() {
        NetworkAllowlist list = NetworkAllowlist.from(Settings.of(NetworkAllowlist.PREFIX + ".reg", "registry.example:443"));
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> AllowlistFilter.of(list, name -> {
            throw new java.net.UnknownHostException(name);
        }));
        assertEquals("airlock.network.allow.reg=registry.example:443: registry.example does not resolve on this machine;"
                + " correct the name, or give its IPv4 address or range", e.getMessage());
    }

    @Test
    void withoutBubblewrapAnAllowlistIsRefusedAtOpen() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> new LocalProvider().open(OpenContext.of(
                Settings.of("airlock.container", "no", LocalSettings.ISOLATION, "none", "airlock.network", "allowlist",
                        NetworkAllowlist.PREFIX + ".db", "127.0.0.1:" + listed))).close());
        assertTrue(e.getMessage().startsWith("airlock.network=allowlist needs bubblewrap's own network namespace")
                && !e.getMessage().contains("\n"), e.getMessage());
    }
}
