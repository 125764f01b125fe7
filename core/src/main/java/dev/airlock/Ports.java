package dev.airlock;

import dev.airlock.settings.Settings;

import java.net.URI;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The sandbox's TCP ports, reachable from this machine: a server a command started on port 3000
 * in the sandbox answers at the URI {@link #expose} returns, {@code http://127.0.0.1:NNNNN/}.
 * What stands behind the URI depends on the backend ({@link Capabilities#ports()}): the port itself
 * on the host's loopback (local), a port the daemon published at create (docker, only the ports
 * declared in {@code airlock.ports}), a local forward over the connection (ssh). Every forward ends
 * when the environment closes. Safe for concurrent use.
 *
 * <pre>{@code
 * try (Environment env = Environments.open(Settings.fromProcess().with("airlock.ports", "8000"))) {
 *     env.start(ExecRequest.of("busybox httpd -f -p 8000 -h /srv"));
 *     java.net.URI url = env.ports().expose(8000); // http://127.0.0.1:49153/
 * }
 * }</pre>
 */
public interface Ports {

    /** The setting that declares, at open, the ports a sandbox will expose: {@code 3000,8080}. */
    String KEY = "airlock.ports";

    /**
     * Makes {@code port} of the sandbox reachable from this machine and returns its URI
     * ({@code http://127.0.0.1:NNNNN/}); the same URI again for a port already exposed. A port outside
     * 1-65535, one not declared in {@code airlock.ports} where the backend needs it declared, or any
     * port on a backend without port support is a {@link ConfigurationException} in one line that
     * says what to do; a closed environment an {@link EnvironmentClosedException}.
     */
    URI expose(int port);

    /** The ports exposed so far and their URIs, by port. */
    Map<Integer, URI> list();

    /**
     * Ends what {@link #expose} made for {@code port} (an ssh forward; nothing for the local port
     * itself or docker's published port, which lasts as long as the container) and drops it from
     * {@link #list}. Nothing happens for a port not exposed.
     */
    void close(int port);

    /** Checks a port number: 1-65535, else one line saying so. */
    static int check(int port) {
        if (port < 1 || port > 65535) {
            throw new ConfigurationException("port " + port + " is not a TCP port; use a port from 1 to 65535");
        }
        return port;
    }

    /** The ports {@code airlock.ports} declares, sorted; a word that is not a port is one line naming it. */
    static SortedSet<Integer> declared(Settings settings) {
        SortedSet<Integer> out = new TreeSet<>();
        for (String word : settings.getList(KEY)) {
            int port;
            try {
                port = Integer.parseInt(word.trim());
            } catch (NumberFormatException e) {
                throw new ConfigurationException(KEY + " holds '" + word + "', which is not a port; list ports from 1 to"
                        + " 65535, comma-separated (" + KEY + "=3000,8080)");
            }
            if (port < 1 || port > 65535) {
                throw new ConfigurationException(KEY + " holds " + port + ", which is not a TCP port; list ports from 1 to"
                        + " 65535, comma-separated (" + KEY + "=3000,8080)");
            }
            out.add(port);
        }
        return out;
    }
}
