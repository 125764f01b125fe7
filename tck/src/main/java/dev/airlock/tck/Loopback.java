package dev.airlock.tck;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;

/** Checks on this machine's loopback ports, for tests of listeners that must be gone. */
public final class Loopback {
    private Loopback() {
    }

    /**
     * Whether nothing listens at {@code host:port}: a connection is refused, or the kernel joined
     * the client socket to itself. Linux may pick a free ephemeral port as the source port of a
     * connection to that very port and connect the socket to itself (a TCP self-connect), which
     * no listener answered; a test asking whether a closed listener still takes connections must
     * not read that as one.
     */
    public static boolean nothingListens(String host, int port) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), 5_000);
            return s.getLocalPort() == port && s.getLocalAddress().equals(s.getInetAddress());
        } catch (ConnectException refused) {
            return true;
        }
    }
}
