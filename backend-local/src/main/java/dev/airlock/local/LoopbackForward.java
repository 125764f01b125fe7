package dev.airlock.local;

import dev.airlock.ConfigurationException;
import dev.airlock.spi.LoopbackListener;


import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A port of an environment's own network ({@link NetworkAnchor}) reachable from this host: a
 * listener on the host's {@code 127.0.0.1} whose every connection is relayed, byte for byte, to
 * {@code 127.0.0.1:PORT} inside the namespace.
 *
 * <p>Why a relay process per connection: a Java socket is always made in this JVM's own network
 * namespace, and a thread cannot move into another one. So each connection starts {@code bash}
 * inside the namespace ({@link NetworkAnchor#enter}), which connects with its {@code /dev/tcp} and
 * copies the connection's bytes to the socket and the socket's back; this class copies between the
 * client and the relay's pipes. The relay holds nothing a command could use: it is in no pid
 * namespace a command sees, it keeps no capability (setpriv), and as root of the host it runs as
 * {@code nobody}: its only reach is the namespace's loopback, where the command already is.
 *
 * <p>A port nothing listens on resets the connection, as a refused connect would. The connection
 * ends when the server closes its side. A client that closes its sending side while the server
 * still works gets its answer; the server is not told (bash's relay cannot half-close its socket),
 * so a server that waits for the client's end of input never answers through here.
 *
 * <p>{@link #close()} ends the listener, every connection and every relay (each relay is a process
 * group of its own, killed whole); the environment closes its forwards before its anchor.
 */
final class LoopbackForward implements AutoCloseable {
    /** Exit status of the relay when nothing listens on the port. */
    private static final int NOT_LISTENING = 97;
    private static final String RELAY = String.join("\n",
            "exec 3<>\"/dev/tcp/127.0.0.1/$1\" 2>/dev/null || exit " + NOT_LISTENING,
            "cat <&0 >&3 &",
            "cat <&3");
    private static final int BUFFER = 64 * 1024;

    private final int port;
    private final List<String> relayArgv;
    private LoopbackListener listener;
    private volatile boolean closed;

    private LoopbackForward(int port, List<String> relayArgv) {
        this.port = port;
        this.relayArgv = relayArgv;
    }

    /**
     * Listens on a free port of the host's {@code 127.0.0.1} for {@code port} of {@code network}.
     *
     * @throws ConfigurationException when this host has no bash to relay with (one line)
     */
    static LoopbackForward open(NetworkAnchor network, int port, String environment) throws IOException {
        Path bash = dev.airlock.spi.HostPrograms.onPath("bash").orElseThrow(() -> new ConfigurationException("port " + port
                + " of the local sandbox needs bash on PATH to relay into its own network (airlock.network=off);"
                + " install bash, or open with airlock.network=on"));
        List<String> argv = new ArrayList<>();
        dev.airlock.spi.HostPrograms.onPath("setsid").ifPresent(s -> argv.add(s.toString()));
        argv.addAll(network.enter());
        // No capability survives into bash, even as root of the anchor's user namespace; as root of
        // the host's, nobody too (no other uid is mapped in a user namespace of the anchor's own).
        dev.airlock.spi.HostPrograms.onPath("setpriv").ifPresent(s -> {
            argv.add(s.toString());
            if (!network.ownUserNamespace()) {
                argv.addAll(List.of("--reuid=65534", "--regid=65534", "--clear-groups"));
            }
            argv.addAll(List.of("--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"));
        });
        argv.addAll(List.of(bash.toString(), "-c", RELAY, "airlock-relay", Integer.toString(port)));
        LoopbackForward f = new LoopbackForward(port, List.copyOf(argv));
        f.listener = LoopbackListener.start("airlock-" + environment + "-port-" + port, client -> f.new Connection(client));
        return f;
    }

    /** {@code http://127.0.0.1:N/}, N the listener's port. */
    URI url() {
        return listener.url();
    }

    /** Ends the listener, every connection and every relay. Idempotent. */
    @Override
    public void close() {
        closed = true;
        listener.close();
    }

    /** One client connection and its relay. */
    private final class Connection implements LoopbackListener.Carrier {
        private final Socket client;
        private volatile Process relay;

        Connection(Socket client) {
            this.client = client;
        }

        @Override
        public void carry() {
            try {
                Process p = new ProcessBuilder(relayArgv).redirectError(ProcessBuilder.Redirect.DISCARD).start();
                relay = p;
                if (closed) {
                    return;
                }
                Thread up = new Thread(() -> upstream(p), Thread.currentThread().getName() + "-up");
                up.setDaemon(true);
                up.start();
                long sent = copy(p.getInputStream(), client.getOutputStream());
                if (sent == 0 && p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == NOT_LISTENING) {
                    client.setSoLinger(true, 0); // a reset, as a refused connect would
                } else {
                    client.shutdownOutput();
                }
            } catch (IOException e) {
                // the client went away, or the relay was ended: nothing more to carry
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } // the listener closes the connection and ends the relay when this returns
        }

        /** The client's bytes to the relay; its end of input closes the relay's stdin. */
        private void upstream(Process p) {
            try (OutputStream toRelay = p.getOutputStream()) {
                copy(client.getInputStream(), toRelay);
            } catch (IOException e) {
                // the relay or the client ended: the other direction closes the connection
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

        @Override
        public void close() {
            try {
                client.close();
            } catch (IOException e) {
                // already closed
            }
            Process p = relay;
            if (p != null) {
                end(p);
            }
        }

        /**
         * Ends the relay, so a closed port has none left when close returns: bash first (once it
         * is gone nothing forks any more), then what it forked, found by its process group (setsid
         * made bash's pid the group's), until none is left.
         */
        private void end(Process p) {
            killAndWait(List.of(p.toHandle()));
            for (int round = 0; round < 10; round++) {
                List<ProcessHandle> left = new ArrayList<>();
                for (long pid : Procfs.groupMembersExcept(p.pid(), "")) {
                    ProcessHandle.of(pid).ifPresent(left::add);
                }
                if (left.isEmpty()) {
                    return;
                }
                killAndWait(left);
            }
        }

        private void killAndWait(List<ProcessHandle> processes) {
            processes.forEach(ProcessHandle::destroyForcibly);
            for (ProcessHandle h : processes) {
                try {
                    h.onExit().get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    // a KILLed process that has not ended within 10 s: the next round finds it again
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    @Override
    public String toString() {
        return url() + " -> port " + port + " of the environment's own network";
    }
}
