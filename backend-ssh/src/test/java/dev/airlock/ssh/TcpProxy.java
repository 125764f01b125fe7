package dev.airlock.ssh;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A loopback TCP forwarder whose connections a test can cut, like a network drop. */
final class TcpProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int targetPort;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    TcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::acceptLoop, "tcp-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return listener.getLocalPort();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket upstream = new Socket();
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort));
                open.add(client);
                open.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                }
            } catch (IOException ignored) {
                // cut
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Drops every connection at once with a reset; new connections are still accepted. */
    void cutAll() {
        for (Socket s : open) {
            try {
                s.setSoLinger(true, 0);
            } catch (IOException ignored) {
                // already closed
            }
            closeQuietly(s);
        }
        open.clear();
    }

    int connectionsSeen() {
        return open.size() / 2;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        cutAll();
    }
}
