package dev.airlock.docker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The exec start's transport against loopback fakes: its deadline and TCP keep-alive. */
class HijackedExecTest {
    private static final String EXEC_ID = "0123456789abcdef";

    /** Accepts connections and reads them; answers with {@code answer} once a request head came, or never when null. */
    private static final class FakeDaemon implements AutoCloseable {
        final ServerSocketChannel server;
        final List<SocketChannel> accepted = new CopyOnWriteArrayList<>();

        FakeDaemon(ServerSocketChannel server, String answer) {
            this.server = server;
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        SocketChannel c = server.accept();
                        accepted.add(c);
                        ByteBuffer b = ByteBuffer.allocate(4096);
                        StringBuilder head = new StringBuilder();
                        while (!head.toString().contains("\r\n\r\n") && c.read(b) >= 0) {
                            b.flip();
                            head.append(StandardCharsets.ISO_8859_1.decode(b));
                            b.clear();
                        }
                        if (answer != null) {
                            c.write(ByteBuffer.wrap(answer.getBytes(StandardCharsets.US_ASCII)));
                        }
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            }, "fake-docker");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (SocketChannel c : accepted) {
                c.close();
            }
        }
    }

    @Test
    void aDaemonThatAcceptsAndNeverAnswersMeetsTheDeadline(@TempDir Path dir) throws Exception {
        Path sock = dir.resolve("silent.sock");
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(sock));
        try (FakeDaemon silent = new FakeDaemon(server, null)) {
            HijackedExec.NoAnswer e = assertThrows(HijackedExec.NoAnswer.class,
                    () -> HijackedExec.start(HijackedExec.Daemon.plain(URI.create("unix://" + sock)), EXEC_ID, Duration.ofMillis(500)));
            assertTrue(e.getMessage().contains("did not answer"), e.getMessage());
            assertEquals(1, silent.accepted.size(), "the request reached the fake daemon");
        }
    }

    @Test
    void anInterruptEndsAWaitForTheAnswerAtOnce(@TempDir Path dir) throws Exception {
        Path sock = dir.resolve("silent.sock");
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(sock));
        try (FakeDaemon silent = new FakeDaemon(server, null)) {
            Thread caller = Thread.currentThread();
            Thread interrupter = new Thread(() -> {
                while (silent.accepted.isEmpty()) {
                    Thread.onSpinWait();
                }
                caller.interrupt();
            });
            interrupter.start();
            IOException e = assertThrows(IOException.class,
                    () -> HijackedExec.start(HijackedExec.Daemon.plain(URI.create("unix://" + sock)), EXEC_ID, Duration.ofMinutes(10)));
            assertTrue(!(e instanceof HijackedExec.NoAnswer), "an interrupt is not the deadline: " + e);
            assertTrue(Thread.interrupted(), "the interrupt stays visible to the caller");
            interrupter.join();
        }
    }

    @Test
    void tcpConnectionsProbeAnIdlePeer() throws Exception {
        ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        try (FakeDaemon answering = new FakeDaemon(server, "HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n");
             HijackedExec h = HijackedExec.start(HijackedExec.Daemon.plain(URI.create("tcp://127.0.0.1:" + port)), EXEC_ID, Duration.ofSeconds(30))) {
            assertEquals(30, h.keepAliveIdleSeconds(), "keep-alive on, probing after 30 s of silence");
            assertEquals(1, answering.accepted.size());
        }
    }

    @Test
    void anErrorAnswerCarriesTheDaemonsMessage() throws Exception {
        ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        String body = "{\"message\":\"No such exec instance: 0123\"}";
        try (FakeDaemon answering = new FakeDaemon(server, "HTTP/1.1 404 Not Found\r\nContent-Length: " + body.length()
                + "\r\n\r\n" + body)) {
            HijackedExec.ApiError e = assertThrows(HijackedExec.ApiError.class,
                    () -> HijackedExec.start(HijackedExec.Daemon.plain(URI.create("tcp://127.0.0.1:" + port)), EXEC_ID, Duration.ofSeconds(30)));
            assertEquals(404, e.status);
            assertEquals("No such exec instance: 0123", e.getMessage());
        }
    }
}
