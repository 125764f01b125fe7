package dev.airlock.spi;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The listening half of an exposed port: a listener on a free port of this machine's
 * {@code 127.0.0.1} that hands each connection to a {@link Carrier} of its own, run on a daemon
 * thread, and that ends them all at {@link #close()}. What carries the bytes is the backend's (an
 * SSH channel, a relay process in a sandbox's network); accepting, tracking and ending
 * connections are this class's, so a port's close leaves no connection behind on any backend.
 */
public final class LoopbackListener implements AutoCloseable {

    /** What carries one accepted connection. */
    public interface Carrier {
        /** Carries the connection until either side ends it; runs on the connection's own thread. */
        void carry();

        /**
         * Ends the connection and whatever carries it, at once and from any thread: called when
         * {@link #carry} returned, and by the listener's close while it still runs. Idempotent.
         */
        void close();
    }

    private final ServerSocket server;
    private final String threadName;
    private final Function<Socket, Carrier> carriers;
    private final Set<Carrier> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private LoopbackListener(ServerSocket server, String threadName, Function<Socket, Carrier> carriers) {
        this.server = server;
        this.threadName = threadName;
        this.carriers = carriers;
    }

    /**
     * Listens on a free port of {@code 127.0.0.1} and starts accepting; {@code carriers} makes the
     * carrier of each accepted socket (it owns the socket from then on).
     *
     * @param threadName the accepting thread's name; each connection's thread adds {@code -conn}
     */
    public static LoopbackListener start(String threadName, Function<Socket, Carrier> carriers) throws IOException {
        LoopbackListener l = new LoopbackListener(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), threadName, carriers);
        daemon(threadName, l::acceptLoop).start();
        return l;
    }

    /** The port it listens on, on {@code 127.0.0.1}. */
    public int port() {
        return server.getLocalPort();
    }

    /** {@code http://127.0.0.1:PORT/}. */
    public URI url() {
        return URI.create("http://127.0.0.1:" + port() + "/");
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            Carrier c = carriers.apply(client);
            open.add(c);
            if (closed) { // close() may have taken its list before this one was in it
                end(c);
                return;
            }
            daemon(threadName + "-conn", () -> {
                try {
                    c.carry();
                } finally {
                    end(c);
                }
            }).start();
        }
    }

    private void end(Carrier c) {
        open.remove(c);
        c.close();
    }

    /** Stops accepting and ends every connection still carried. Idempotent. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing a listener: nothing more to free
        }
        for (Carrier c : List.copyOf(open)) {
            end(c);
        }
    }

    private static Thread daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        return t;
    }
}
