package dev.airlock.spi;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The listening half of an exposed port: each connection carried, each carrier closed when done, close ends them all. */
class LoopbackListenerTest {
    /** Only a hang exceeds it. */
    private static final long LONG_SECONDS = 20;

    /** Echoes each connection's bytes back until the client ends its side; records its closes. */
    private static final class Echo implements LoopbackListener.Carrier {
        final Socket socket;
        final CountDownLatch closed = new CountDownLatch(1);
        final CountDownLatch carrying = new CountDownLatch(1);

        Echo(Socket socket) {
            this.socket = socket;
        }

        @Override
        public void carry() {
            carrying.countDown();
            try {
                socket.getInputStream().transferTo(socket.getOutputStream());
                socket.shutdownOutput();
            } catch (IOException e) {
                // closed under it
            }
        }

        @Override
        public void close() {
            closed.countDown();
            try {
                socket.close();
            } catch (IOException e) {
                // already closed
            }
        }
    }

    @Test
    void eachConnectionIsCarriedAndItsCarrierClosedWhenDone() throws Exception {
        List<Echo> carriers = new CopyOnWriteArrayList<>();
        try (LoopbackListener l = LoopbackListener.start("test-listener", s -> {
            Echo e = new Echo(s);
            carriers.add(e);
            return e;
        })) {
            assertEquals("http://127.0.0.1:" + l.port() + "/", l.url().toString());
            byte[] data = "both ways\0\377".getBytes(StandardCharsets.ISO_8859_1);
            try (Socket c = new Socket(InetAddress.getLoopbackAddress(), l.port())) {
                c.getOutputStream().write(data);
                c.shutdownOutput();
                assertArrayEquals(data, c.getInputStream().readAllBytes());
            }
            assertTrue(carriers.get(0).closed.await(LONG_SECONDS, TimeUnit.SECONDS), "a carrier that ended was not closed");
        }
    }

    @Test
    void closeEndsEveryConnectionStillCarriedAndRefusesNewOnes() throws Exception {
        List<Echo> carriers = new CopyOnWriteArrayList<>();
        String acceptor = "test-listener-closed-" + System.nanoTime();
        LoopbackListener l = LoopbackListener.start(acceptor, s -> {
            Echo e = new Echo(s);
            carriers.add(e);
            return e;
        });
        try (Socket a = new Socket(InetAddress.getLoopbackAddress(), l.port());
             Socket b = new Socket(InetAddress.getLoopbackAddress(), l.port())) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LONG_SECONDS);
            while (carriers.size() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            for (Echo e : carriers) {
                assertTrue(e.carrying.await(LONG_SECONDS, TimeUnit.SECONDS));
            }
            l.close();
            for (Echo e : carriers) {
                assertTrue(e.closed.await(LONG_SECONDS, TimeUnit.SECONDS), "close left a connection carried");
            }
            for (Socket s : List.of(a, b)) {
                s.setSoTimeout((int) TimeUnit.SECONDS.toMillis(LONG_SECONDS));
                InputStream in = s.getInputStream();
                try {
                    assertEquals(-1, in.read(), "a connection kept answering after close");
                } catch (IOException reset) {
                    // a reset ends it too
                }
            }
        }
        // No new connection is taken: the accepting thread ends, and a connection to the port is
        // refused, or (the port already someone else's on a busy machine, or the kernel joining a
        // client socket to itself on a free ephemeral port) at least never carried here.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LONG_SECONDS);
        while (acceptorAlive(acceptor) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(!acceptorAlive(acceptor), "the accepting thread outlived close");
        try (Socket late = new Socket(InetAddress.getLoopbackAddress(), l.port())) {
            assertEquals(2, carriers.size(), "a connection after close was carried");
        } catch (ConnectException refused) {
            // the usual answer
        }
    }

    private static boolean acceptorAlive(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
    }
}
