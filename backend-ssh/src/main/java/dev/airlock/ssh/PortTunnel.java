package dev.airlock.ssh;

import dev.airlock.spi.LoopbackListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.TimeUnit;

/**
 * One exposed port of an SSH host: a listener on this machine's 127.0.0.1 whose every connection
 * is carried by a direct-tcpip channel to {@code 127.0.0.1:PORT} on the host, opened on the pool's
 * connection of the moment. Its URL therefore outlives the login it was first served on (a
 * JSch or OpenSSH {@code -L} listener dies with its session). A connection the host refuses is
 * closed at once, as {@code ssh -L} does.
 */
final class PortTunnel implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PortTunnel.class);
    /**
     * After the local side ended its sending, how long the host's side may still answer before the
     * connection is closed: a client that closed outright would otherwise hold the channel for as
     * long as a keep-alive server waits.
     */
    private static final long AFTER_LOCAL_END_MILLIS = TimeUnit.SECONDS.toMillis(60);

    private final Connections connections;
    private final int remotePort;
    private final String host;
    private LoopbackListener listener;

    private PortTunnel(Connections connections, int remotePort, String host) {
        this.connections = connections;
        this.remotePort = remotePort;
        this.host = host;
    }

    /** Listens on a free port of this machine's loopback and starts accepting. */
    static PortTunnel open(Connections connections, int remotePort, String host) throws IOException {
        PortTunnel t = new PortTunnel(connections, remotePort, host);
        t.listener = LoopbackListener.start("airlock-ssh-port-" + remotePort, s -> new LoopbackListener.Carrier() {
            @Override
            public void carry() {
                t.serve(s);
            }

            @Override
            public void close() {
                closeQuietly(s); // the channel's stream ends with it, and serve's try closes the channel
            }
        });
        return t;
    }

    int localPort() {
        return listener.port();
    }

    /** Carries one connection: the host's bytes back on a second thread, ours out on this one. */
    private void serve(Socket s) {
        try (Connections.Stream ch = connections.connectTo(remotePort)) {
            Thread back = daemon("airlock-ssh-port-" + remotePort + "-back", () -> {
                try {
                    copy(ch.in, s.getOutputStream());
                    s.shutdownOutput();
                } catch (IOException e) {
                    closeQuietly(s); // the local side is gone: nothing more to deliver
                }
            });
            back.start();
            try {
                copy(s.getInputStream(), ch.out);
            } catch (IOException e) {
                LOG.debug("port {} of {}: the local side failed: {}", remotePort, host, e.getMessage());
            }
            try {
                ch.out.close(); // EOF to the host's side; its answer may still come
            } catch (IOException e) {
                // the channel is gone already
            }
            if (!s.isClosed()) {
                back.join(AFTER_LOCAL_END_MILLIS); // (closed: the tunnel ends, and the channel with it)
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("port {} of {}: {}", remotePort, host, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } // the listener closes the socket when this returns
    }

    private static void copy(InputStream in, OutputStream out) throws IOException {
        byte[] buf = new byte[Connections.PACKET];
        int n;
        while ((n = in.read(buf)) >= 0) {
            out.write(buf, 0, n);
            out.flush();
        }
    }

    /** No new connection is accepted, and the ones carried end. */
    @Override
    public void close() {
        listener.close();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing: nothing to do
        }
    }

    private static Thread daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        return t;
    }
}
