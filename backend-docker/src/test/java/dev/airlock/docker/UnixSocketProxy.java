package dev.airlock.docker;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP listener that forwards each connection to the daemon's unix socket, half-closes
 * included, so the tcp:// host path runs against the real daemon without reconfiguring it.
 */
final class UnixSocketProxy implements AutoCloseable {
    private final ServerSocketChannel server;
    private final Path socket;
    private final List<SocketChannel> open = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    UnixSocketProxy(Path socket) throws IOException {
        this.socket = socket;
        this.server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        this.acceptor = new Thread(this::accept, "unix-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String url() throws IOException {
        InetSocketAddress a = (InetSocketAddress) server.getLocalAddress();
        return "tcp://127.0.0.1:" + a.getPort();
    }

    private void accept() {
        while (server.isOpen()) {
            try {
                SocketChannel client = server.accept();
                SocketChannel upstream = SocketChannel.open(StandardProtocolFamily.UNIX);
                upstream.connect(UnixDomainSocketAddress.of(socket));
                open.add(client);
                open.add(upstream);
                copy(client, upstream);
                copy(upstream, client);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private static void copy(SocketChannel from, SocketChannel to) {
        Thread t = new Thread(() -> {
            ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
            try {
                while (from.read(buf) >= 0) {
                    buf.flip();
                    while (buf.hasRemaining()) {
                        to.write(buf);
                    }
                    buf.clear();
                }
                to.shutdownOutput(); // pass the half-close on
            } catch (IOException ignored) {
                // one side closed
            }
        }, "unix-proxy-copy");
        t.setDaemon(true);
        t.start();
    }

    /** Breaks every connection open now (new ones are still accepted), as a network fault would. */
    void breakConnections() throws IOException {
        for (SocketChannel c : open) {
            c.close();
            open.remove(c);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (SocketChannel c : open) {
            c.close();
        }
    }
}
