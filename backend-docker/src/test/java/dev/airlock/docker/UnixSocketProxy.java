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
    private final java.util.concurrent.atomic.AtomicInteger stalled = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean stallExecStarts;
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private volatile String watched;
    private final java.util.concurrent.atomic.AtomicInteger watchedCount = new java.util.concurrent.atomic.AtomicInteger();
    private final List<String> heads = new CopyOnWriteArrayList<>();
    private final List<SocketChannel> execs = new CopyOnWriteArrayList<>();
    private final List<SocketChannel> leases = new CopyOnWriteArrayList<>();
    private static final java.util.regex.Pattern REQUEST_LINE =
            java.util.regex.Pattern.compile("(?m)^((?:GET|POST|PUT|DELETE|HEAD) \\S+) HTTP/1\\.[01]\r\n");

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
                open.add(client);
                Thread t = new Thread(() -> serve(client), "unix-proxy-serve");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /** Forwards one connection, unless it starts an exec while those are stalled: then it is held open, unanswered. */
    private void serve(SocketChannel client) {
        try {
            ByteBuffer first = ByteBuffer.allocate(64 * 1024);
            if (client.read(first) < 0) {
                client.close();
                return;
            }
            first.flip();
            String head = java.nio.charset.StandardCharsets.ISO_8859_1.decode(first.duplicate()).toString();
            boolean exec = head.startsWith("POST /exec/") && head.contains("/start ");
            if (exec) {
                execs.add(client);
            } else if (head.startsWith("POST /containers/") && head.contains("/attach?")) {
                leases.add(client);
            }
            if (stallExecStarts && exec) {
                stalled.incrementAndGet();
                ByteBuffer sink = ByteBuffer.allocate(4096);
                while (client.read(sink) >= 0) {
                    sink.clear(); // accept and never answer, as a wedged daemon does
                }
                return;
            }
            SocketChannel upstream = SocketChannel.open(StandardProtocolFamily.UNIX);
            upstream.connect(UnixDomainSocketAddress.of(socket));
            open.add(upstream);
            record(first);
            while (first.hasRemaining()) {
                upstream.write(first);
            }
            copy(client, upstream, true);
            copy(upstream, client, false);
        } catch (IOException ignored) {
            // one side closed
        }
    }

    /** From now on, exec starts are accepted and never answered. */
    void stallExecStarts() {
        stallExecStarts = true;
    }

    /** Exec starts are forwarded again (those held stay unanswered). */
    void resumeExecStarts() {
        stallExecStarts = false;
    }

    /** How many exec starts were held unanswered. */
    int stalledExecStarts() {
        return stalled.get();
    }

    /** Notes the request lines in bytes going to the daemon (a request split across reads may be missed). */
    private void record(ByteBuffer chunk) {
        var m = REQUEST_LINE.matcher(java.nio.charset.StandardCharsets.ISO_8859_1.decode(chunk.duplicate()));
        String text = java.nio.charset.StandardCharsets.ISO_8859_1.decode(chunk.duplicate()).toString();
        while (m.find()) {
            requests.add(m.group(1));
            int end = text.indexOf("\r\n\r\n", m.start());
            heads.add(text.substring(m.start(), end < 0 ? text.length() : end));
        }
    }

    /** From now on, counts how often {@code text} goes to the daemon, on any connection (a script sent to an exec's stdin, say). */
    void watch(String text) {
        watched = text;
        watchedCount.set(0);
    }

    /** How often the watched text went to the daemon since {@link #watch}. */
    int watchedCount() {
        return watchedCount.get();
    }

    /** Counts the watched text in {@code carry} (the end of this connection's last chunk) and the chunk; returns the new carry. */
    private String count(String carry, ByteBuffer chunk) {
        String w = watched;
        if (w == null) {
            return "";
        }
        String text = carry + java.nio.charset.StandardCharsets.ISO_8859_1.decode(chunk.duplicate());
        for (int i = text.indexOf(w); i >= 0; i = text.indexOf(w, i + w.length())) {
            watchedCount.incrementAndGet();
        }
        return text.substring(Math.max(0, text.length() - (w.length() - 1)));
    }

    /** The request heads seen so far (request line and headers), in order. */
    List<String> heads() {
        return List.copyOf(heads);
    }

    /** The request lines seen so far ({@code METHOD PATH}), in order. */
    List<String> requests() {
        return List.copyOf(requests);
    }

    private void copy(SocketChannel from, SocketChannel to, boolean toDaemon) {
        Thread t = new Thread(() -> {
            ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
            String carry = "";
            try {
                while (from.read(buf) >= 0) {
                    buf.flip();
                    if (toDaemon) {
                        record(buf);
                        carry = count(carry, buf);
                    }
                    while (buf.hasRemaining()) {
                        to.write(buf);
                    }
                    buf.clear();
                }
                to.shutdownOutput(); // pass the half-close on
            } catch (IOException broken) {
                try {
                    to.close(); // a broken connection ends at both sides, as a network fault would
                } catch (IOException ignored) {
                    // already closed
                }
            }
        }, "unix-proxy-copy");
        t.setDaemon(true);
        t.start();
    }

    /**
     * Breaks every exec's connection open now (new ones are still accepted), as a network fault
     * would: with a reset, since a clean close while the exec runs is what a command that closed its
     * own output looks like.
     */
    void breakExecConnections() throws IOException {
        for (SocketChannel c : execs) {
            c.setOption(java.net.StandardSocketOptions.SO_LINGER, 0);
            c.close();
        }
    }

    /** Breaks the containers' stdin attach connections (their leases). */
    void breakLeases() throws IOException {
        for (SocketChannel c : leases) {
            c.close();
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
