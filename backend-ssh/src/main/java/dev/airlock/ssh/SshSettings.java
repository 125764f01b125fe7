package dev.airlock.ssh;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Secret;
import dev.airlock.settings.Settings;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The SSH backend's settings.
 *
 * <table>
 *   <caption>ssh settings</caption>
 *   <tr><th>key</th><th>type</th><th>default</th><th>secret</th></tr>
 *   <tr><td>airlock.ssh.host</td><td>host name or address</td><td>(required)</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.port</td><td>int</td><td>22</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.user</td><td>string</td><td>the JVM's user.name</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.identity</td><td>list of private key files ({@code a,b} or {@code .N} keys)</td>
 *       <td>~/.ssh/id_ed25519, id_ecdsa, id_rsa that exist</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.passphrase</td><td>secret</td><td>none</td><td>yes</td></tr>
 *   <tr><td>airlock.ssh.agent</td><td>auto|no|socket path</td><td>auto ($SSH_AUTH_SOCK when set)</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.known-hosts</td><td>path</td><td>~/.ssh/known_hosts</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.strict-host-key-checking</td><td>yes|accept-new</td><td>yes</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.connect-timeout</td><td>duration</td><td>15s</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.keepalive</td><td>duration (0 = off)</td><td>15s</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.keepalive-count</td><td>int</td><td>3</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.channels-per-connection</td><td>int 1..10</td><td>8</td><td>no</td></tr>
 * </table>
 */
record SshSettings(String host, int port, String user, List<Path> identities, boolean identitiesNamed,
                   Optional<Secret> passphrase, Optional<Path> agentSocket, Path knownHosts, boolean acceptNew,
                   Duration connectTimeout, Duration keepalive, int keepaliveCount, int channelsPerConnection) {
    static final String PREFIX = "airlock.ssh.";
    static final String HOST = PREFIX + "host";
    static final String PORT = PREFIX + "port";
    static final String USER = PREFIX + "user";
    static final String IDENTITY = PREFIX + "identity";
    static final String PASSPHRASE = PREFIX + "passphrase";
    static final String AGENT = PREFIX + "agent";
    static final String KNOWN_HOSTS = PREFIX + "known-hosts";
    static final String STRICT = PREFIX + "strict-host-key-checking";
    static final String CONNECT_TIMEOUT = PREFIX + "connect-timeout";
    static final String KEEPALIVE = PREFIX + "keepalive";
    static final String KEEPALIVE_COUNT = PREFIX + "keepalive-count";
    static final String CHANNELS = PREFIX + "channels-per-connection";

    /** The OpenSSH default MaxSessions: a connection never carries more channels than this. */
    static final int MAX_SESSIONS = 10;

    static SshSettings from(Settings s) {
        return from(s, System.getenv("SSH_AUTH_SOCK"));
    }

    static SshSettings from(Settings s, String authSock) {
        return from(s, authSock, localPath("~"));
    }

    /** {@code home} is where the default keys are looked for ({@code HOME/.ssh/id_*}); tests point it elsewhere. */
    static SshSettings from(Settings s, String authSock, Path home) {
        String host = s.require(HOST).trim();
        int port = s.getInt(PORT, 22);
        if (port < 1 || port > 65535) {
            throw new ConfigurationException("setting " + PORT + " has invalid value " + port + ": expected 1..65535");
        }
        String user = s.get(USER).map(String::trim).filter(v -> !v.isEmpty())
                .orElse(System.getProperty("user.name", ""));
        if (user.isEmpty()) {
            throw new ConfigurationException("setting " + USER + " is required: the JVM reports no user name");
        }
        List<String> listed = s.getList(IDENTITY);
        List<Path> ids = new ArrayList<>();
        for (String f : listed) {
            ids.add(localPath(f));
        }
        if (ids.isEmpty()) {
            for (String name : List.of("id_ed25519", "id_ecdsa", "id_rsa")) {
                Path p = home.resolve(".ssh").resolve(name);
                if (Files.isRegularFile(p)) {
                    ids.add(p);
                }
            }
        }
        Optional<Path> agent = agentSocket(s.get(AGENT, "auto").trim(), authSock);
        Path knownHosts = localPath(s.get(KNOWN_HOSTS, "~/.ssh/known_hosts"));
        boolean acceptNew = "accept-new".equals(s.getChoice(STRICT, "yes", "yes", "accept-new"));
        Duration connect = s.getDuration(CONNECT_TIMEOUT, Duration.ofSeconds(15));
        if (connect.isNegative() || connect.isZero()) {
            throw new ConfigurationException("setting " + CONNECT_TIMEOUT + " must be a positive duration such as 15s");
        }
        Duration keepalive = s.getDuration(KEEPALIVE, Duration.ofSeconds(15));
        int count = s.getInt(KEEPALIVE_COUNT, 3);
        int channels = s.getInt(CHANNELS, 8);
        if (channels < 1 || channels > MAX_SESSIONS) {
            throw new ConfigurationException("setting " + CHANNELS + " has invalid value " + channels
                    + ": expected 1.." + MAX_SESSIONS + " (OpenSSH's default MaxSessions is " + MAX_SESSIONS + ")");
        }
        return new SshSettings(host, port, user, List.copyOf(ids), !listed.isEmpty(), s.secret(PASSPHRASE).filter(p -> !p.isEmpty()),
                agent, knownHosts, acceptNew, connect, keepalive.isNegative() ? Duration.ZERO : keepalive,
                Math.max(1, count), channels);
    }

    private static Optional<Path> agentSocket(String value, String authSock) {
        switch (value) {
            case "no", "off", "false" -> {
                return Optional.empty();
            }
            case "auto", "", "yes", "on", "true" -> {
                return authSock == null || authSock.isBlank() ? Optional.empty() : Optional.of(Path.of(authSock));
            }
            default -> {
                return Optional.of(localPath(value));
            }
        }
    }

    /** A path on the JVM's host; {@code ~} is this user's home (keys and known_hosts live here, not on the target). */
    static Path localPath(String p) {
        String home = System.getProperty("user.home", "");
        if (p.equals("~")) {
            return Path.of(home);
        }
        if (p.startsWith("~/")) {
            return Path.of(home, p.substring(2));
        }
        return Path.of(p);
    }

    /** How OpenSSH names this host in known_hosts: {@code host} on port 22, else {@code [host]:port}. */
    String knownHostsName() {
        return port == 22 ? host : "[" + host + "]:" + port;
    }

    /** {@code user@host:port}, for messages and the environment id. */
    String display() {
        return user + "@" + host + (port == 22 ? "" : ":" + port);
    }
}
