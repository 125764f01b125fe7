package dev.airlock.local;

import dev.airlock.ConfigurationException;
import dev.airlock.NetworkAllowlist;
import dev.airlock.NetworkMode;
import dev.airlock.StdinMode;
import dev.airlock.settings.Settings;

import java.util.Map;
import java.util.Optional;

/**
 * The local backend's settings.
 *
 * <table>
 *   <caption>local settings</caption>
 *   <tr><th>key</th><th>type</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>airlock.local.stdin-mode</td><td>pipe|payload</td><td>pipe</td>
 *       <td>payload stages stdin as a 0600 file like the cloud backends do (for testing that path)</td></tr>
 *   <tr><td>airlock.local.env-mode</td><td>native|staged</td><td>native</td>
 *       <td>staged sends the children's variables in a staged env script like the remote backends do
 *       (for testing that path)</td></tr>
 *   <tr><td>airlock.local.isolation</td><td>none|bwrap</td><td>bwrap where it runs on this machine; none (with a
 *       warning at the first exec) where it does not</td>
 *       <td>bwrap runs every command under bubblewrap: read-only root, its own /tmp, /run, /dev and /proc, the
 *       real home hidden, writable binds only for the children's home, the private dir, the working directory
 *       and airlock.local.writable.*; none runs commands as this JVM's children, contained only for commands
 *       that keep to their environment</td></tr>
 *   <tr><td>airlock.local.network</td><td>on|off</td><td>on; off in the eval profile</td><td>off cuts the network under bwrap (loopback only); airlock.network, when set, wins and this may only agree with it
 *       (airlock.network=allowlist: a namespace of the environment's own with a filtered way out, see {@link AllowlistFilter})</td></tr>
 *   <tr><td>airlock.local.workdir</td><td>path|none</td><td>the JVM's working directory</td>
 *       <td>the agent's project: writable under bwrap, where commands start</td></tr>
 *   <tr><td>airlock.local.writable.NAME</td><td>path</td><td></td><td>more writable binds under bwrap</td></tr>
 *   <tr><td>airlock.local.readable.NAME</td><td>path</td><td></td><td>more read-only binds under bwrap, for what
 *       the hidden real home holds that commands need (a toolchain under ~/.local, say); credential dirs and files
 *       inside stay hidden</td></tr>
 *   <tr><td>airlock.local.bwrap</td><td>path</td><td>bwrap on PATH</td><td>the bubblewrap binary to use</td></tr>
 * </table>
 *
 * @param isolation empty when not set: the environment decides (bwrap where it runs here)
 * @param network   whether commands share the host's network ({@code airlock.network=on}); false with the
 *                  network off and with an allowlist (both: a namespace of the environment's own)
 * @param allowlist the destinations under {@code airlock.network=allowlist}; empty in every other mode
 * @param workdir   empty for "none"
 */
record LocalSettings(StdinMode stdinMode, boolean nativeEnv, Optional<Isolation> isolation, boolean network,
                     NetworkAllowlist allowlist, Optional<String> workdir, Map<String, String> writable,
                     Map<String, String> readable, Optional<String> bwrap) {
    static final String STDIN_MODE = "airlock.local.stdin-mode";
    static final String ENV_MODE = "airlock.local.env-mode";
    static final String ISOLATION = "airlock.local.isolation";
    static final String NETWORK = "airlock.local.network";
    static final String WORKDIR = "airlock.local.workdir";
    static final String WRITABLE = "airlock.local.writable";
    static final String READABLE = "airlock.local.readable";
    static final String BWRAP = "airlock.local.bwrap";

    enum Isolation { NONE, BWRAP }

    static LocalSettings from(Settings s) {
        StdinMode mode = "payload".equals(s.getChoice(STDIN_MODE, "pipe", "pipe", "payload")) ? StdinMode.PAYLOAD : StdinMode.PIPE;
        boolean nativeEnv = "native".equals(s.getChoice(ENV_MODE, "native", "native", "staged"));
        Optional<Isolation> isolation = s.get(ISOLATION).map(String::trim).filter(v -> !v.isEmpty())
                .map(v -> "bwrap".equals(s.getChoice(ISOLATION, "none", "none", "bwrap")) ? Isolation.BWRAP : Isolation.NONE);
        // The eval profile keeps a whole run inside its dir: a shared network would leave the host's
        // abstract sockets and loopback ports reachable, so it starts with a network of its own.
        String networkDefault = dev.airlock.containment.ContainmentSettings.from(s).eval() ? "off" : "on";
        boolean network = "on".equals(s.getChoice(NETWORK, networkDefault, "on", "off"));
        NetworkAllowlist allowlist = new NetworkAllowlist(java.util.List.of());
        if (NetworkMode.isSet(s)) {
            // airlock.network is the one key for every backend; the older local key may only agree with it.
            NetworkMode asked = NetworkMode.from(s);
            if (s.get(NETWORK).isPresent() && asked != NetworkMode.ALLOWLIST && network != (asked == NetworkMode.ON)) {
                throw new ConfigurationException(NetworkMode.KEY + "=" + asked.label() + " and " + NETWORK + "="
                        + (network ? "on" : "off") + " disagree; remove " + NETWORK + " (" + NetworkMode.KEY
                        + " is the one setting for every backend)");
            }
            network = asked == NetworkMode.ON;
            if (asked == NetworkMode.ALLOWLIST) {
                allowlist = NetworkAllowlist.from(s);
            }
        }
        String dir = s.get(WORKDIR).map(String::trim).filter(v -> !v.isEmpty()).orElse(System.getProperty("user.dir"));
        Optional<String> workdir = dir.equals("none") ? Optional.empty() : Optional.of(absolute(WORKDIR, dir));
        Map<String, String> writable = s.keys(WRITABLE);
        writable.forEach((name, path) -> absolute(WRITABLE + "." + name, path.trim()));
        Map<String, String> readable = s.keys(READABLE);
        readable.forEach((name, path) -> absolute(READABLE + "." + name, path.trim()));
        Optional<String> bwrap = s.get(BWRAP).map(String::trim).filter(v -> !v.isEmpty()).map(v -> absolute(BWRAP, v));
        return new LocalSettings(mode, nativeEnv, isolation, network, allowlist, workdir, writable, readable, bwrap);
    }

    private static String absolute(String key, String path) {
        if (!path.startsWith("/")) {
            throw new ConfigurationException("setting " + key + " must be an absolute path, got '" + path + "'");
        }
        return path;
    }
}
