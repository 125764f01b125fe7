package dev.airlock.ssh;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Secret;
import dev.airlock.settings.Settings;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The SSH backend's settings.
 *
 * <table>
 *   <caption>ssh settings</caption>
 *   <tr><th>key</th><th>type</th><th>default</th><th>secret</th></tr>
 *   <tr><td>airlock.ssh.host</td><td>[user@]host[:port], [user@][ipv6]:port or ssh://[user@]host[:port]; an SSH config alias</td><td>(required)</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.port</td><td>int</td><td>22</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.user</td><td>string</td><td>the JVM's user.name</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.identity</td><td>list of private key files ({@code a,b} or {@code .N} keys)</td>
 *       <td>~/.ssh/id_ed25519, id_ecdsa, id_rsa that exist</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.passphrase</td><td>secret</td><td>none</td><td>yes</td></tr>
 *   <tr><td>airlock.ssh.password</td><td>secret: answers keyboard-interactive prompts that do not echo, and the password method</td><td>none</td><td>yes</td></tr>
 *   <tr><td>airlock.ssh.passphrase.NAME</td><td>secret, for the key airlock.ssh.identity.NAME</td><td>airlock.ssh.passphrase</td><td>yes</td></tr>
 *   <tr><td>airlock.ssh.agent</td><td>auto|no|socket path</td><td>auto ($SSH_AUTH_SOCK when set)</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.known-hosts</td><td>path</td><td>the config's UserKnownHostsFile, else ~/.ssh/known_hosts</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.global-known-hosts</td><td>list of paths | none</td><td>/etc/ssh/ssh_known_hosts, /etc/ssh/ssh_known_hosts2 that exist</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.strict-host-key-checking</td><td>yes|accept-new</td><td>the config's StrictHostKeyChecking, else yes</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.connect-timeout</td><td>duration</td><td>15s</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.keepalive</td><td>duration (0 = off)</td><td>15s</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.keepalive-count</td><td>int</td><td>3</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.channels-per-connection</td><td>int 1..10</td><td>8</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.output-buffer</td><td>bytes</td><td>64m</td><td>no</td></tr>
 *   <tr><td>airlock.ssh.config</td><td>path | none</td><td>~/.ssh/config</td><td>no</td></tr>
 * </table>
 */
record SshSettings(String host, int port, String user, List<Path> identities, boolean identitiesNamed,
                   Optional<Secret> passphrase, Optional<Path> agentSocket, Path knownHosts, boolean acceptNew,
                   Duration connectTimeout, Duration keepalive, int keepaliveCount, int channelsPerConnection,
                   long outputBuffer, List<Hop> jumps, Optional<String> proxyCommand, Map<Path, Path> certificates,
                   Map<Path, KeyPassphrase> keyPassphrases, Optional<Secret> password) {

    /** A key's own passphrase and the setting it came from ({@code airlock.ssh.passphrase.NAME}). */
    record KeyPassphrase(String setting, Secret secret) {
    }

    /** A host logged in to on the way to the target ({@code ProxyJump}), resolved through the SSH config. */
    record Hop(String host, int port, String user) {
    }

    /** These settings for logging in to {@code hop} directly (its errors then name it). */
    SshSettings forHop(Hop hop) {
        return new SshSettings(hop.host(), hop.port(), hop.user(), identities, identitiesNamed, passphrase, agentSocket,
                knownHosts, acceptNew, connectTimeout, keepalive, keepaliveCount, channelsPerConnection, outputBuffer,
                List.of(), Optional.empty(), certificates, keyPassphrases, password);
    }

    /**
     * The passphrase for one key file: its own ({@code airlock.ssh.passphrase.NAME} for
     * {@code airlock.ssh.identity.NAME}), else the common one.
     */
    Optional<Secret> passphraseFor(Path key) {
        return Optional.ofNullable(keyPassphrases.get(key)).map(KeyPassphrase::secret).or(() -> passphrase);
    }

    /** The setting a key's passphrase comes from, for error messages (never the value). */
    String passphraseSettingFor(Path key) {
        KeyPassphrase own = keyPassphrases.get(key);
        return own != null ? own.setting() : PASSPHRASE;
    }

    static final String PREFIX = "airlock.ssh.";
    static final String HOST = PREFIX + "host";
    static final String PORT = PREFIX + "port";
    static final String USER = PREFIX + "user";
    static final String IDENTITY = PREFIX + "identity";
    static final String PASSPHRASE = PREFIX + "passphrase";
    /** The login password, given to keyboard-interactive prompts that do not echo and to the password method. */
    static final String PASSWORD = PREFIX + "password";
    static final String AGENT = PREFIX + "agent";
    static final String KNOWN_HOSTS = PREFIX + "known-hosts";
    /** The system's known_hosts files, checked after the user's (OpenSSH's {@code GlobalKnownHostsFile}); never written. */
    static final String GLOBAL_KNOWN_HOSTS = PREFIX + "global-known-hosts";
    static final List<String> DEFAULT_GLOBAL_KNOWN_HOSTS = List.of("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2");
    static final String STRICT = PREFIX + "strict-host-key-checking";
    static final String CONNECT_TIMEOUT = PREFIX + "connect-timeout";
    static final String KEEPALIVE = PREFIX + "keepalive";
    static final String KEEPALIVE_COUNT = PREFIX + "keepalive-count";
    static final String CHANNELS = PREFIX + "channels-per-connection";
    static final String OUTPUT_BUFFER = PREFIX + "output-buffer";
    static final String CONFIG = PREFIX + "config";

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
        Destination dest = Destination.parse(s.require(HOST).trim(), "setting " + HOST);
        String alias = dest.host();
        SshConfigFile config = SshConfigFile.read(configFile(s, home), home);
        SshConfigFile.Entry entry = config.entry(alias);
        String host = entry.hostName().orElse(alias);
        // As ssh: -p and -l win over the destination's own port and user, which win over the config.
        int port = s.get(PORT).isPresent() ? s.getInt(PORT, 22) : dest.port() > 0 ? dest.port() : entry.port() > 0 ? entry.port() : 22;
        if (port < 1 || port > 65535) {
            throw new ConfigurationException("setting " + PORT + " has invalid value " + port + ": expected 1..65535");
        }
        String user = s.get(USER).map(String::trim).filter(v -> !v.isEmpty()).or(dest::user)
                .or(entry::user).orElse(System.getProperty("user.name", ""));
        if (user.isEmpty()) {
            throw new ConfigurationException("setting " + USER + " is required: the JVM reports no user name");
        }
        List<String> listed = s.getList(IDENTITY);
        List<Path> ids = new ArrayList<>();
        Map<Path, Path> certs = new LinkedHashMap<>();
        for (String f : listed) {
            ids.add(localPath(f, home));
        }
        if (ids.isEmpty()) {
            // As OpenSSH: IdentityFile lines that name no file are passed over.
            List<String> files = entry.identityFiles();
            for (int i = 0; i < files.size(); i++) {
                Path p = localPath(files.get(i), home);
                if (Files.isRegularFile(p)) {
                    ids.add(p);
                    if (i < entry.certificateFiles().size()) {
                        certs.put(p, localPath(entry.certificateFiles().get(i), home));
                    }
                }
            }
        }
        if (ids.isEmpty()) {
            for (String name : List.of("id_ed25519", "id_ecdsa", "id_rsa")) {
                Path p = home.resolve(".ssh").resolve(name);
                if (Files.isRegularFile(p)) {
                    ids.add(p);
                }
            }
        }
        List<Hop> jumps = new ArrayList<>();
        for (String j : entry.proxyJump().map(v -> v.split(",")).orElse(new String[0])) {
            // As ssh -J: a hop's user is its own (the entry's, else its config's, else this user's), never the target's.
            jumps.add(hop(j.trim(), config, System.getProperty("user.name", ""), listed.isEmpty() ? ids : new ArrayList<>(), home));
        }
        Optional<String> proxyCommand = jumps.isEmpty() ? entry.proxyCommand() : Optional.empty();
        Optional<Path> agent = agentSocket(s.get(AGENT, "auto").trim(), authSock);
        Path knownHosts = localPath(s.get(KNOWN_HOSTS).map(String::trim)
                .orElse(entry.userKnownHostsFiles().isEmpty() ? "~/.ssh/known_hosts" : entry.userKnownHostsFiles().get(0)), home);
        boolean acceptNew = s.get(STRICT).isPresent()
                ? "accept-new".equals(s.getChoice(STRICT, "yes", "yes", "accept-new"))
                : entry.strictHostKeyChecking().map(SshSettings::acceptsNew).orElse(false);
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
                Math.max(1, count), channels, outputBuffer(s), List.copyOf(jumps), proxyCommand, Map.copyOf(certs),
                keyPassphrases(s, home), s.secret(PASSWORD).filter(p -> !p.isEmpty()));
    }

    /** {@code airlock.ssh.passphrase.NAME} for the key {@code airlock.ssh.identity.NAME}; a NAME with no such key is an error. */
    private static Map<Path, KeyPassphrase> keyPassphrases(Settings s, Path home) {
        Map<String, String> named = s.keys(IDENTITY);
        Map<Path, KeyPassphrase> out = new LinkedHashMap<>();
        for (String name : s.keys(PASSPHRASE).keySet()) {
            String file = named.get(name);
            if (file == null) {
                throw new ConfigurationException("setting " + PASSPHRASE + "." + name + " is for the key " + IDENTITY + "." + name
                        + ", which is not set: name the key file with that setting, or use " + PASSPHRASE + " for every key");
            }
            String key = PASSPHRASE + "." + name;
            s.secret(key).filter(p -> !p.isEmpty()).ifPresent(p -> out.put(localPath(file.trim(), home), new KeyPassphrase(key, p)));
        }
        return Map.copyOf(out);
    }

    private static Optional<Path> configFile(Settings s, Path home) {
        String v = s.get(CONFIG, "~/.ssh/config").trim();
        return v.equals("none") || v.isEmpty() ? Optional.empty() : Optional.of(localPath(v, home));
    }

    /**
     * StrictHostKeyChecking from the SSH config: {@code accept-new} as it says; {@code no} and
     * {@code off} also accept new keys only (Airlock never connects to a changed key);
     * {@code yes} and {@code ask} (there is no one to ask) check strictly.
     */
    private static boolean acceptsNew(String value) {
        return switch (value) {
            case "accept-new", "no", "off", "false" -> true;
            default -> false;
        };
    }

    /**
     * Where to log in, as {@code ssh} and the Docker CLI take it: {@code [user@]host[:port]},
     * {@code [user@][v6addr]:port}, or {@code ssh://[user@]host[:port]}. A bare IPv6 address
     * (more than one colon) is a host. Port and user are -1 and empty when not given.
     */
    record Destination(String host, int port, Optional<String> user) {
        static Destination parse(String spec, String setting) {
            String rest = spec.startsWith("ssh://") ? spec.substring("ssh://".length()) : spec;
            if (rest.endsWith("/")) {
                rest = rest.substring(0, rest.length() - 1);
            }
            Optional<String> user = Optional.empty();
            int at = rest.lastIndexOf('@');
            if (at >= 0) {
                user = Optional.of(rest.substring(0, at)).filter(u -> !u.isEmpty());
                rest = rest.substring(at + 1);
            }
            int port = -1;
            String host = rest;
            if (rest.startsWith("[")) {
                int close = rest.indexOf(']');
                if (close < 0) {
                    throw bad(spec, setting);
                }
                host = rest.substring(1, close);
                String after = rest.substring(close + 1);
                if (!after.isEmpty()) {
                    if (!after.startsWith(":")) {
                        throw bad(spec, setting);
                    }
                    port = port(after.substring(1), spec, setting);
                }
            } else if (rest.indexOf(':') >= 0 && rest.indexOf(':') == rest.lastIndexOf(':')) {
                int colon = rest.indexOf(':');
                host = rest.substring(0, colon);
                port = port(rest.substring(colon + 1), spec, setting);
            }
            if (host.isEmpty() || host.contains("/")) {
                throw bad(spec, setting);
            }
            return new Destination(host, port, user);
        }

        private static int port(String text, String spec, String setting) {
            try {
                int p = Integer.parseInt(text);
                if (p >= 1 && p <= 65535) {
                    return p;
                }
            } catch (NumberFormatException ignored) {
                // below
            }
            throw bad(spec, setting);
        }

        private static ConfigurationException bad(String spec, String setting) {
            return new ConfigurationException(setting + " has invalid value " + spec
                    + ": expected [user@]host[:port], [user@][ipv6]:port or ssh://[user@]host[:port] (port 1..65535)");
        }
    }

    /** One ProxyJump entry, {@code [user@]host[:port]} or {@code ssh://[user@]host[:port]}, itself looked up in the config as OpenSSH does. */
    private static Hop hop(String spec, SshConfigFile config, String defaultUser, List<Path> ids, Path home) {
        Destination d = Destination.parse(spec, "the ProxyJump entry in the SSH config");
        String user = d.user().orElse(null);
        int port = d.port();
        String name = d.host();
        SshConfigFile.Entry e = config.entry(name);
        for (String f : e.identityFiles()) {
            Path p = localPath(f, home);
            if (Files.isRegularFile(p) && !ids.contains(p)) {
                ids.add(p); // one key list for every login; the hop's own keys go after the target's
            }
        }
        return new Hop(e.hostName().orElse(name), port > 0 ? port : e.port() > 0 ? e.port() : 22,
                user != null ? user : e.user().orElse(defaultUser));
    }

    private static long outputBuffer(Settings s) {
        long b = s.getBytes(OUTPUT_BUFFER, 64L << 20);
        if (b < ChannelBuffer.MEMORY) {
            throw new ConfigurationException("setting " + OUTPUT_BUFFER + " has invalid value " + b
                    + ": expected at least 1m (bytes of one command's unread output held per stream)");
        }
        return b;
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
        return localPath(p, Path.of(System.getProperty("user.home", "")));
    }

    static Path localPath(String p, Path home) {
        if (p.equals("~")) {
            return home;
        }
        if (p.startsWith("~/")) {
            return home.resolve(p.substring(2));
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

    /**
     * The system's known_hosts files that exist: the default two when unset (either may be
     * missing), none for {@code none}; a file named explicitly must exist.
     */
    static List<Path> globalKnownHosts(Settings s) {
        List<String> listed = s.getList(GLOBAL_KNOWN_HOSTS);
        if (listed.size() == 1 && listed.get(0).trim().equals("none")) {
            return List.of();
        }
        List<Path> out = new ArrayList<>();
        for (String p : listed.isEmpty() ? DEFAULT_GLOBAL_KNOWN_HOSTS : listed) {
            Path path = Path.of(p.trim());
            if (java.nio.file.Files.isReadable(path)) {
                out.add(path);
            } else if (!listed.isEmpty()) {
                throw new ConfigurationException("setting " + GLOBAL_KNOWN_HOSTS + " names " + path
                        + ", which is missing or unreadable: fix the path, or set it to none");
            }
        }
        return out;
    }
}
