package dev.airlock.emulator;

import dev.airlock.spi.LoopbackListener;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A sandbox port reachable from this machine, as a service's edge makes it reachable from the
 * internet (a Modal tunnel, a Daytona preview link, a Vercel route): a listener on
 * {@code 127.0.0.1} whose every connection is relayed, byte for byte, to that port on the
 * sandbox's own loopback.
 *
 * <p>The sandbox has its own network namespace, so the emulator cannot connect to the port from
 * the host. Each connection runs a relay inside the sandbox, as its user (bash's {@code /dev/tcp}
 * to {@code 127.0.0.1:PORT}: the connection's bytes to the socket, the socket's to the
 * connection); it reaches that sandbox's loopback and nothing else. The connection ends when the
 * server closes its side; what the client still sends after that is dropped. A client that ends
 * its side first (closed, or half-closed awaiting an answer: the edge cannot tell them apart) gives
 * the server {@link #LINGER} more to answer and close, then the connection is ended. A port nothing
 * listens on resets the connection, as a refused connect would. The journal records each relay as
 * a {@value #CALL} command of the sandbox.
 *
 * <p>An edge may have a {@link Gate}: the service's proxy in front of the port (a token to check,
 * an expiry), which reads the start of each connection before any relay runs and either lets it
 * through or answers the client itself. A gated edge is the only way to its port: there is no
 * ungated listener beside it to go around the check.
 *
 * <p>{@link #close()} ends the listener and every connection and relay it carries; a sandbox's
 * edges close when the sandbox stops.
 */
public final class PortEdge implements AutoCloseable {
    /**
     * The service's proxy in front of a port: reads what it needs of a connection's start and
     * decides, before anything reaches the sandbox.
     */
    @FunctionalInterface
    public interface Gate {
        /** Lets every connection through, as a public port. */
        Gate OPEN = (fromClient, toClient) -> Optional.of(new byte[0]);

        /**
         * The bytes to send on to the server first (those it read from {@code fromClient}), or
         * empty to end the connection (having answered {@code toClient} itself: a 401). Reads
         * time out after {@link #GATE_READ_TIMEOUT}.
         */
        Optional<byte[]> admit(InputStream fromClient, OutputStream toClient) throws IOException;
    }

    /** How long a {@link Gate} may wait for the start of a connection. */
    public static final Duration GATE_READ_TIMEOUT = Duration.ofSeconds(30);
    /** The call each relay is journalled under. */
    public static final String CALL = "port-relay";
    /** Exit status of the relay when nothing listens on the port. */
    private static final int NOT_LISTENING = 97;
    private static final String RELAY = String.join("\n",
            "exec 3<>\"/dev/tcp/127.0.0.1/$1\" 2>/dev/null || exit " + NOT_LISTENING,
            "cat <&0 >&3 &",
            "cat <&3",
            "kill $! 2>/dev/null",
            "exit 0");
    private static final int BUFFER = 64 * 1024;
    /** How long a server may still answer after the client ended its side. */
    public static final Duration LINGER = Duration.ofSeconds(60);

    private final EmulatedSandbox sandbox;
    private final int port;
    private final Gate gate;
    private LoopbackListener listener;
    private volatile boolean closed;

    private PortEdge(EmulatedSandbox sandbox, int port, Gate gate) {
        this.sandbox = sandbox;
        this.port = port;
        this.gate = gate;
    }

    /**
     * Listens on a free port of {@code 127.0.0.1} and relays each connection to {@code port} in
     * {@code sandbox}, until {@link #close()} or the sandbox stops.
     *
     * @throws IllegalStateException when the sandbox has stopped
     */
    public static PortEdge open(EmulatedSandbox sandbox, int port) throws IOException {
        return open(sandbox, port, Gate.OPEN);
    }

    /**
     * As {@link #open(EmulatedSandbox, int)}, each connection first through {@code gate}.
     *
     * @throws IllegalStateException when the sandbox has stopped
     */
    public static PortEdge open(EmulatedSandbox sandbox, int port, Gate gate) throws IOException {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("not a TCP port: " + port);
        }
        PortEdge edge = new PortEdge(sandbox, port, Objects.requireNonNull(gate, "gate"));
        edge.listener = LoopbackListener.start("airlock-emulator-edge-" + sandbox.id() + "-" + port,
                client -> edge.new Connection(client));
        if (!sandbox.addEdge(edge)) {
            edge.listener.close();
            throw new IllegalStateException("sandbox " + sandbox.id() + " is stopped");
        }
        return edge;
    }

    /** The sandbox port this edge reaches. */
    public int sandboxPort() {
        return port;
    }

    /** The port this edge listens on, on {@code 127.0.0.1}. */
    public int port() {
        return listener.port();
    }

    /** The edge's loopback host, {@code 127.0.0.1}. */
    public String host() {
        return "127.0.0.1";
    }

    /** {@code http://127.0.0.1:PORT/}. */
    public URI url() {
        return listener.url();
    }

    /** Ends the listener and every connection and relay it carries. Idempotent. */
    @Override
    public void close() {
        closed = true;
        sandbox.removeEdge(this);
        listener.close();
    }

    @Override
    public String toString() {
        return "edge " + url() + " -> " + sandbox.id() + ":" + port;
    }

    /** One client connection and its relay in the sandbox. */
    private final class Connection implements LoopbackListener.Carrier {
        private final Socket client;
        private volatile SandboxProcess relay;

        Connection(Socket client) {
            this.client = client;
        }

        @Override
        public void carry() {
            try {
                byte[] first;
                if (gate == Gate.OPEN) {
                    first = new byte[0];
                } else {
                    client.setSoTimeout((int) GATE_READ_TIMEOUT.toMillis());
                    Optional<byte[]> admitted = gate.admit(client.getInputStream(), client.getOutputStream());
                    if (admitted.isEmpty()) {
                        client.getOutputStream().flush();
                        return; // the gate answered the client itself
                    }
                    client.setSoTimeout(0);
                    first = admitted.get();
                }
                SandboxProcess p;
                try {
                    p = sandbox.exec(new EmulatedSandbox.Command(CALL, List.of("bash", "-c", RELAY, "relay",
                            String.valueOf(port)), "/", Map.of(), CALL + "-" + port + "-" + UUID.randomUUID(), 0,
                            Optional.empty()));
                } catch (IOException | IllegalStateException e) {
                    reset(); // a stopped sandbox takes no connection
                    return;
                }
                relay = p;
                if (closed) {
                    return;
                }
                p.stderr().close();
                Thread up = new Thread(() -> upstream(p, first), "airlock-emulator-edge-" + sandbox.id() + "-" + port + "-up");
                up.setDaemon(true);
                up.start();
                long sent = copy(p.stdout(), client.getOutputStream());
                int code = p.waitFor(5, TimeUnit.SECONDS) ? p.exitValue() : -1;
                if (sent == 0 && code == NOT_LISTENING) {
                    reset();
                } else {
                    client.shutdownOutput();
                }
            } catch (IOException e) {
                // the client went away, or the relay was ended: nothing more to carry
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                close();
            }
        }

        /** What the gate read, then the client's bytes, to the relay; its end of stream is the relay's, and starts the {@link #LINGER}. */
        private void upstream(SandboxProcess p, byte[] first) {
            try (OutputStream toRelay = p.stdin()) {
                toRelay.write(first);
                toRelay.flush();
                copy(client.getInputStream(), toRelay);
            } catch (IOException e) {
                // the relay or the client ended: the other direction closes the connection
            }
            try {
                if (!p.waitFor(LINGER.toMillis(), TimeUnit.MILLISECONDS)) {
                    close();
                }
            } catch (InterruptedException e) {
                close();
            }
        }

        private long copy(InputStream in, OutputStream out) throws IOException {
            byte[] buf = new byte[BUFFER];
            long total = 0;
            for (int n; (n = in.read(buf)) >= 0; ) {
                out.write(buf, 0, n);
                out.flush();
                total += n;
            }
            return total;
        }

        /** Ends the connection at once with a reset, as a refused connect would. */
        private void reset() {
            try {
                client.setSoLinger(true, 0);
            } catch (IOException e) {
                // already closed
            }
            close();
        }

        @Override
        public void close() {
            try {
                client.close();
            } catch (IOException e) {
                // already closed
            }
            SandboxProcess p = relay;
            if (p != null && p.alive()) {
                p.signal(9);
            }
        }
    }
}
