package dev.airlock.ssh;

import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The user's {@code ~/.ssh/config} against two real sshd: a Host alias with HostName, User, Port
 * and IdentityFile, reached through the other one with ProxyJump, and with ProxyCommand.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SshConfigTest {
    private SshdServer bastion;
    private SshdServer target;
    private Path home;
    private Path knownHosts;
    private final String user = System.getProperty("user.name");

    @BeforeAll
    void start() throws Exception {
        bastion = SshdServer.start();
        target = SshdServer.start();
        home = target.dir.resolve("home");
        Files.createDirectories(home.resolve(".ssh"));
        knownHosts = home.resolve(".ssh/known_hosts");
        Files.writeString(knownHosts, Files.readString(bastion.knownHosts) + Files.readString(target.knownHosts));
    }

    @AfterAll
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
        if (bastion != null) {
            bastion.close();
        }
    }

    /** Only the host alias, the config and the known hosts: everything else comes from the config. */
    private Environment open(String alias, String config) throws Exception {
        Path file = home.resolve(".ssh/config");
        Files.writeString(file, config);
        Settings s = Settings.of(Map.of("airlock.backend", "ssh", SshSettings.HOST, alias,
                SshSettings.KNOWN_HOSTS, knownHosts.toString(), SshSettings.AGENT, "no", "airlock.container", "no"));
        return SshBackend.open(OpenContext.of(s), SshSettings.from(s, null, home));
    }

    private static int logins(SshdServer server) {
        return server.log().split("Accepted publickey", -1).length - 1;
    }

    /**
     * CertificateFile: a key the server does not list logs in by its certificate, signed by a user
     * CA the server trusts (TrustedUserCAKeys); the same key without it is refused.
     */
    @Test
    void aCertificateFileLogsInAKeyTheServerOnlyKnowsByItsCa() throws Exception {
        Path key = target.dir.resolve("id_certified");
        String withCert = String.join("\n",
                "Host certified",
                "    HostName 127.0.0.1",
                "    Port " + target.port,
                "    User " + user,
                "    IdentityFile " + key,
                "    CertificateFile " + target.dir.resolve("id_certified-cert.pub"),
                "");
        try (Environment env = open("certified", withCert)) {
            ExecResult r = env.exec(ExecRequest.of("echo by-certificate"));
            assertEquals("by-certificate\n", r.stdout().text());
        }
        assertTrue(target.log().contains("Accepted publickey") && target.log().contains("CA ED25519"), "sshd saw a certificate login");
        String withoutCert = String.join("\n",
                "Host uncertified",
                "    HostName 127.0.0.1",
                "    Port " + target.port,
                "    User " + user,
                "    IdentityFile " + key,
                "");
        dev.airlock.AirlockException refused = org.junit.jupiter.api.Assertions.assertThrows(dev.airlock.AirlockException.class,
                () -> open("uncertified", withoutCert).close());
        assertTrue(!refused.getMessage().contains("\n"), refused.getMessage());
    }

    @Test
    void aHostAliasReachedThroughProxyJump() throws Exception {
        String config = String.join("\n",
                "Host work",
                "    HostName 127.0.0.1",
                "    Port " + target.port,
                "    User " + user,
                "    IdentityFile " + target.userKey,
                "    ProxyJump jump",
                "",
                "Host jump",
                "    HostName 127.0.0.1",
                "    Port " + bastion.port,
                "    User " + user,
                "    IdentityFile " + bastion.ecdsaKey,
                "");
        int before = logins(bastion);
        try (Environment env = open("work", config)) {
            assertEquals(user + "@127.0.0.1:" + target.port, SshBackend.of(env).destination());
            ExecResult r = env.exec(ExecRequest.of("printf '%s' \"$SSH_CONNECTION\" | cut -d' ' -f4"));
            assertEquals(0, r.exitCode(), r.stderr().text());
            assertEquals(Integer.toString(target.port), r.stdout().text().strip(), "the command ran on the target");
        }
        assertTrue(logins(bastion) > before, "the login did not go through the jump host:\n" + bastion.log());
        // Neither key file alone opens both hosts: the target took its own key, the jump host its own.
        assertTrue(target.log().contains("Accepted publickey"), target.log());
    }

    @Test
    void proxyCommandCarriesTheConnection() throws Exception {
        Path marker = home.resolve("proxy-command-ran");
        String config = String.join("\n",
                "Host viacommand",
                "    HostName 127.0.0.1",
                "    Port " + target.port,
                "    User " + user,
                "    IdentityFile " + target.rsaKey,
                "    ProxyCommand touch " + marker + "; exec bash -c 'exec 3<>/dev/tcp/%h/%p; cat <&3 & exec cat >&3'",
                "");
        try (Environment env = open("viacommand", config)) {
            assertEquals("ok\n", env.exec(ExecRequest.of("echo ok")).stdout().text());
        }
        assertTrue(Files.exists(marker), "the ProxyCommand did not run");
    }

    @Test
    void aFailingProxyCommandIsReportedWithItsOwnError() {
        String config = String.join("\n",
                "Host viabroken",
                "    HostName 127.0.0.1",
                "    Port " + target.port,
                "    User " + user,
                "    IdentityFile " + target.rsaKey,
                "    ProxyCommand echo 'proxy: cannot resolve gate.example' >&2; exit 3",
                "");
        dev.airlock.AirlockException e = org.junit.jupiter.api.Assertions.assertThrows(dev.airlock.AirlockException.class,
                () -> open("viabroken", config).close());
        String m = e.getMessage();
        assertTrue(m.contains("ProxyCommand") && m.contains("exited 3: proxy: cannot resolve gate.example"), m);
        assertTrue(!m.contains("Broken pipe") && !m.contains("\n"), m);
    }

    @Test
    void settingsWinOverTheConfigAndProxyJumpEntriesParse() throws Exception {
        Files.writeString(home.resolve(".ssh/config"), String.join("\n",
                "Host alias", "  HostName 127.0.0.1", "  Port 1", "  User nobody-here",
                "  ProxyJump admin@gate:2222,[::1]:22,plain", ""));
        Settings s = Settings.of(Map.of(SshSettings.HOST, "alias", SshSettings.PORT, "2200", SshSettings.USER, "me"));
        SshSettings r = SshSettings.from(s, null, home);
        assertEquals("127.0.0.1", r.host());
        assertEquals(2200, r.port());
        assertEquals("me", r.user());
        // A hop logs in as its own user, as ssh -J does: the target's (airlock.ssh.user, like ssh -l) is not the hops'.
        String local = System.getProperty("user.name");
        assertEquals(List.of(new SshSettings.Hop("gate", 2222, "admin"), new SshSettings.Hop("::1", 22, local),
                new SshSettings.Hop("plain", 22, local)), r.jumps());
        // "none" ignores the file.
        SshSettings none = SshSettings.from(Settings.of(Map.of(SshSettings.HOST, "alias", SshSettings.CONFIG, "none")), null, home);
        assertEquals("alias", none.host());
        assertEquals(22, none.port());
    }
}
