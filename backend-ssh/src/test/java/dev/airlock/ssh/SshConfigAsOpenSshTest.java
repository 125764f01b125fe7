package dev.airlock.ssh;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import dev.airlock.tck.Services;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SSH config as OpenSSH reads it: for each config file and host in the table, what our parser
 * resolves (host name, port, user, identity files, ProxyJump, known hosts files, strict host key
 * checking) equals what {@code ssh -G -F FILE HOST} prints. Needs the OpenSSH client.
 */
class SshConfigAsOpenSshTest {
    @TempDir
    Path dir;

    private final Path home = Path.of(System.getProperty("user.home"));

    /** One row: config text ({@code DIR} stands for the temp dir), included files, and the hosts to resolve. */
    private record Row(String name, String config, Map<String, String> includes, List<String> hosts) {
    }

    private static final List<Row> TABLE = List.of(
            new Row("plain block", """
                    Host web
                      HostName 10.0.0.7
                      Port 2201
                      User deploy
                      IdentityFile /keys/web_ed25519
                      IdentityFile /keys/second
                    """, Map.of(), List.of("web", "other")),
            new Row("first value wins across blocks, wildcards and negation", """
                    Host *.prod !db.prod
                      User produser
                      Port 2300
                    Host api.prod
                      User ignored
                      HostName api.internal
                    Host *
                      Port 2400
                      StrictHostKeyChecking accept-new
                    """, Map.of(), List.of("api.prod", "db.prod", "x")),
            new Row("key=value, quotes and comments", """
                    Host=quoted
                      HostName="quoted.example.org"
                      Port = 2022
                      IdentityFile "/keys/with space/id"  # trailing comment
                      StrictHostKeyChecking=no
                    """, Map.of(), List.of("quoted")),
            new Row("Include files, globs and conditional Includes", """
                    Include DIR/conf.d/*.conf
                    Host inner
                      Include DIR/inner.conf
                    Host inner other
                      Port 2999
                    """, Map.of("conf.d/10-a.conf", "Host a-*\n  User from-a\n  HostName %h.a.example\n",
                    "conf.d/20-b.conf", "Host a-one\n  User from-b\n  Port 2100\n",
                    "inner.conf", "User inner-user\nHostName inner.example\nHost *\n  ProxyJump jumper\n"),
                    List.of("a-one", "a-two", "inner", "other")),
            new Row("tokens in HostName and UserKnownHostsFile", """
                    Host tok
                      HostName %h.tokens.example
                      User tokuser
                      Port 2345
                      UserKnownHostsFile DIR/kh_%h_%p_%r %d/kh2 ~/kh3 /kh/%u/%n
                    Host pct
                      HostName 100%%-%h
                    """, Map.of(), List.of("tok", "pct")),
            new Row("ProxyJump forms; the first of ProxyJump and ProxyCommand wins", """
                    Host uri
                      ProxyJump ssh://bob@gate.example:2200,jim@[::1]:2022,plain
                    Host cmd
                      ProxyCommand nc %h %p
                    Host cmd uri
                      ProxyJump late.example
                    Host none
                      ProxyJump none
                    Host none
                      ProxyJump too-late
                    """, Map.of(), List.of("uri", "cmd", "none")),
            new Row("Match", """
                    Match originalhost m1
                      User m1user
                    Match host m2.real
                      Port 2555
                    Host m2
                      HostName m2.real
                    Match all
                      UserKnownHostsFile /kh/all
                    """, Map.of(), List.of("m1", "m2")));

    @Test
    void everyRowResolvesAsSshDashGDoes() throws Exception {
        Path ssh = SshdServer.find("ssh");
        Services.require(ssh != null, "the OpenSSH client is needed to compare with `ssh -G` (apt-get install openssh-client)");
        List<String> failures = new ArrayList<>();
        int compared = 0;
        for (Row row : TABLE) {
            Path config = dir.resolve(row.name().replaceAll("\\W+", "-") + ".config");
            Files.writeString(config, row.config().replace("DIR", dir.toString()));
            for (Map.Entry<String, String> inc : row.includes().entrySet()) {
                Path f = dir.resolve(inc.getKey());
                Files.createDirectories(f.getParent());
                Files.writeString(f, inc.getValue());
            }
            SshConfigFile parsed = SshConfigFile.read(Optional.of(config), home);
            for (String host : row.hosts()) {
                Map<String, List<String>> g = sshDashG(ssh, config, host);
                Map<String, String> theirs = comparable(g);
                Map<String, String> ours = comparable(parsed.entry(host), host);
                for (String key : theirs.keySet()) {
                    compared++;
                    if (!theirs.get(key).equals(ours.get(key))) {
                        failures.add(row.name() + " / " + host + " / " + key + ": ssh -G says [" + theirs.get(key)
                                + "], we say [" + ours.get(key) + "]");
                    }
                }
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n", failures));
        assertTrue(compared > 100, compared + " values compared");
    }

    /** What {@code ssh -G} prints for the keys we compare, as text. */
    private Map<String, String> comparable(Map<String, List<String>> g) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("hostname", String.join(" ", g.get("hostname")));
        m.put("port", String.join(" ", g.get("port")));
        m.put("user", String.join(" ", g.get("user")));
        List<String> ids = g.getOrDefault("identityfile", List.of());
        // ssh prints its defaults when none is set (we have defaults of our own): compare set ones only.
        m.put("identityfile", ids.contains("~/.ssh/id_dsa") ? "(default)" : String.join(" ", ids.stream().map(this::tilde).toList()));
        m.put("proxyjump", String.join(" ", g.getOrDefault("proxyjump", List.of("(none)"))));
        m.put("proxycommand", String.join(" ", g.getOrDefault("proxycommand", List.of("(none)"))));
        String kh = String.join(" ", g.get("userknownhostsfile"));
        m.put("userknownhostsfile", kh.equals(home + "/.ssh/known_hosts " + home + "/.ssh/known_hosts2") ? "(default)" : kh);
        m.put("stricthostkeychecking", String.join(" ", g.get("stricthostkeychecking")));
        return m;
    }

    /** Our entry in the same terms (and with ssh's own defaults where the config says nothing). */
    private static Map<String, String> comparable(SshConfigFile.Entry e, String host) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("hostname", e.hostName().orElse(host));
        m.put("port", Integer.toString(e.port() > 0 ? e.port() : 22));
        m.put("user", e.user().orElse(System.getProperty("user.name")));
        m.put("identityfile", e.identityFiles().isEmpty() ? "(default)" : String.join(" ", e.identityFiles()));
        m.put("proxyjump", e.proxyJump().orElse("(none)"));
        m.put("proxycommand", e.proxyCommand().orElse("(none)"));
        m.put("userknownhostsfile", e.userKnownHostsFiles().isEmpty() ? "(default)" : String.join(" ", e.userKnownHostsFiles()));
        m.put("stricthostkeychecking", e.strictHostKeyChecking().map(v -> switch (v) {
            case "yes" -> "true";
            case "no", "off" -> "false";
            default -> v;
        }).orElse("ask"));
        return m;
    }

    private String tilde(String p) {
        return p.startsWith("~/") ? home.resolve(p.substring(2)).toString() : p;
    }

    private static Map<String, List<String>> sshDashG(Path ssh, Path config, String host) throws Exception {
        Process p = new ProcessBuilder(ssh.toString(), "-G", "-F", config.toString(), host)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), "ssh -G -F " + config + " " + host + ": " + err);
        Map<String, List<String>> m = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            int sp = line.indexOf(' ');
            if (sp > 0) {
                m.computeIfAbsent(line.substring(0, sp), k -> new ArrayList<>()).add(line.substring(sp + 1));
            }
        }
        return m;
    }

    /** ssh -G prints IdentityFile before its tokens are expanded (ssh does that at load): checked here by ssh_config(5). */
    @Test
    void tokensInIdentityFilesAreExpanded() throws Exception {
        Path config = dir.resolve("config");
        Files.writeString(config, "Host t\n  HostName real.example\n  User remote\n  Port 2201\n"
                + "  IdentityFile ~/.ssh/%r@%h:%p_%n\n  CertificateFile %d/certs/%u-%%\n");
        SshConfigFile.Entry e = SshConfigFile.read(Optional.of(config), dir).entry("t");
        assertEquals(List.of(dir + "/.ssh/remote@real.example:2201_t"), e.identityFiles());
        assertEquals(List.of(dir + "/certs/" + System.getProperty("user.name") + "-%"), e.certificateFiles());
    }

    @Test
    void proxyCommandTokensOfTheLocalSideAreExpandedAndTheLoginsWaitForTheConnect() throws Exception {
        Path config = dir.resolve("config");
        Files.writeString(config, "Host pc\n  ProxyCommand connect %n as %u from %d to %h:%p for %r, 100%%\n");
        SshConfigFile.Entry e = SshConfigFile.read(Optional.of(config), dir).entry("pc");
        String expected = "connect pc as " + System.getProperty("user.name") + " from " + dir + " to %h:%p for %r, 100%%";
        assertEquals(Optional.of(expected), e.proxyCommand());
        assertEquals("connect pc as " + System.getProperty("user.name") + " from " + dir + " to box:2200 for bob, 100%",
                Proxies.Command.expand(expected, "box", 2200, "bob"));
    }

    @Test
    void theHostSettingTakesUserAndPortAsSshAndDockerDo() {
        SshSettings a = SshSettings.from(Settings.of(Map.of(SshSettings.HOST, "alice@127.0.0.1:2322", SshSettings.CONFIG, "none")), null, dir);
        assertEquals("alice@127.0.0.1:2322", a.display());
        SshSettings b = SshSettings.from(Settings.of(Map.of(SshSettings.HOST, "ssh://bob@[::1]:2200", SshSettings.CONFIG, "none")), null, dir);
        assertEquals(List.of("::1", "2200", "bob"), List.of(b.host(), Integer.toString(b.port()), b.user()));
        SshSettings c = SshSettings.from(Settings.of(Map.of(SshSettings.HOST, "::1", SshSettings.CONFIG, "none")), null, dir);
        assertEquals("::1", c.host());
        assertEquals(22, c.port());
        // The settings of their own win, as ssh -l and -p do.
        SshSettings d = SshSettings.from(Settings.of(Map.of(SshSettings.HOST, "alice@h:2322", SshSettings.USER, "carol",
                SshSettings.PORT, "2400", SshSettings.CONFIG, "none")), null, dir);
        assertEquals("carol@h:2400", d.display());
        ConfigurationException bad = assertThrows(ConfigurationException.class, () -> SshSettings.from(
                Settings.of(Map.of(SshSettings.HOST, "h:99999", SshSettings.CONFIG, "none")), null, dir));
        assertTrue(bad.getMessage().startsWith("setting " + SshSettings.HOST + " has invalid value h:99999: expected [user@]host[:port]"), bad.getMessage());
        assertFalse(bad.getMessage().contains("\n"));
    }

    @Test
    void knownHostsFileAndStrictCheckingComeFromTheConfigUnlessSet() throws Exception {
        Path config = dir.resolve("config");
        Files.writeString(config, "Host k\n  UserKnownHostsFile ~/kh/%h first-is-used-only\n  StrictHostKeyChecking accept-new\n"
                + "Host strict\n  StrictHostKeyChecking no\n");
        SshSettings fromConfig = SshSettings.from(Settings.of(Map.of(SshSettings.HOST, "k", SshSettings.CONFIG, config.toString())), null, dir);
        assertEquals(dir.resolve("kh/k"), fromConfig.knownHosts());
        assertTrue(fromConfig.acceptNew());
        SshSettings set = SshSettings.from(Settings.of(Map.of(SshSettings.HOST, "k", SshSettings.CONFIG, config.toString(),
                SshSettings.KNOWN_HOSTS, "/elsewhere", SshSettings.STRICT, "yes")), null, dir);
        assertEquals(Path.of("/elsewhere"), set.knownHosts());
        assertFalse(set.acceptNew());
        // "no" in the config accepts new keys only: Airlock never connects to a changed one.
        assertTrue(SshSettings.from(Settings.of(Map.of(SshSettings.HOST, "strict", SshSettings.CONFIG, config.toString())), null, dir).acceptNew());
    }
}
