package dev.airlock.docker;

import dev.airlock.spi.BulkInputStream;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import jdk.net.ExtendedSocketOptions;

/**
 * One {@code POST /exec/{id}/start} over a connection of our own, hijacked as the Docker CLI does
 * (and, for a container's lease, one stdin-only attach).
 *
 * <p>Why not docker-java's {@code execStartCmd}: its transports never half-close the connection
 * after stdin ends (docker-java issues 1552 and 1684), so a command reading to end-of-input would
 * wait forever. Here closing {@link #stdin()} calls {@code shutdownOutput()} on the socket, the
 * daemon closes the process's stdin, and {@code cat} ends: stdin streams (PIPE mode) with bounded
 * memory and no staging. The response is Docker's multiplexed stream: frames of an 8-byte header
 * (stream type, three zero bytes, big-endian length) and the payload.
 */
final class HijackedExec implements Closeable {
    static final int STDOUT = 1;
    static final int STDERR = 2;
    /** Docker's "system error" stream, sent when the daemon itself fails mid-exec; shown as stderr. */
    static final int SYSERR = 3;

    private static final Pattern EXEC_ID = Pattern.compile("[0-9a-f]{12,128}");
    private static final Pattern MESSAGE = Pattern.compile("\"message\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final int MAX_HEAD = 16 * 1024;
    /** Closes connections whose start was not answered in time; one daemon thread for all. */
    private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "airlock-docker-deadlines");
        t.setDaemon(true);
        return t;
    });

    private final SocketChannel channel;
    /** Set once connected: straight from the channel, or through TLS layered on it. */
    private InputStream in;
    private OutputStream stdin;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean deadlinePassed;
    private final byte[] header = new byte[8];
    /** The payload length of the frame {@link #nextFrame()} read last. */
    long payloadLength;

    private HijackedExec(SocketChannel channel) {
        this.channel = channel;
    }

    /**
     * Where the daemon listens: a unix socket or {@code tcp://}, the latter with TLS when
     * {@code tls} is present (see {@link DockerTls}).
     */
    record Daemon(URI uri, Optional<SSLContext> tls) {
        static Daemon plain(URI uri) {
            return new Daemon(uri, Optional.empty());
        }
    }

    /** A Docker API error answer to the start call (404: no such exec or container, 409: not running). */
    static final class ApiError extends IOException {
        private static final long serialVersionUID = 1L;
        final int status;

        ApiError(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    /** The daemon did not answer the start within its deadline: whether the command started is unknown. */
    static final class NoAnswer extends IOException {
        private static final long serialVersionUID = 1L;

        NoAnswer(String message) {
            super(message);
        }
    }

    /**
     * Connects to the daemon and starts the exec; the returned connection carries its streams.
     * Connecting, sending the start and reading the answer's head share one deadline: a daemon
     * that accepts and never answers gets the connection closed under it ({@link NoAnswer}).
     * An interrupt closes the channel as well (it is interruptible), so a cancel never waits on it.
     */
    static HijackedExec start(Daemon host, String execId, Duration deadline) throws IOException {
        if (!EXEC_ID.matcher(execId).matches()) {
            throw new IOException("unexpected exec id from the daemon: " + execId);
        }
        return upgrade(host, "the exec start", "/exec/" + execId + "/start",
                "{\"Detach\":false,\"Tty\":false}".getBytes(StandardCharsets.US_ASCII), deadline);
    }

    /**
     * Attaches to a created container's stdin only ({@code StdinOnce}): the connection is the
     * container's lease, whose end (a close, or this JVM's death) closes the container's stdin.
     */
    static HijackedExec attachStdin(Daemon host, String containerId, Duration deadline) throws IOException {
        if (!EXEC_ID.matcher(containerId).matches()) {
            throw new IOException("unexpected container id from the daemon: " + containerId);
        }
        return upgrade(host, "the attach", "/containers/" + containerId + "/attach?stream=1&stdin=1&stdout=0&stderr=0",
                new byte[0], deadline);
    }

    private static HijackedExec upgrade(Daemon daemon, String what, String path, byte[] body, Duration deadline) throws IOException {
        URI host = daemon.uri();
        SocketChannel ch = "unix".equals(host.getScheme()) ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
        HijackedExec h = new HijackedExec(ch);
        ScheduledFuture<?> guard = DEADLINES.schedule(() -> {
            h.deadlinePassed = true;
            h.close();
        }, deadline.toMillis(), TimeUnit.MILLISECONDS);
        try {
            connect(ch, host, deadline);
            if (daemon.tls().isPresent()) {
                SSLSocket tls = DockerTls.layer(daemon.tls().get(), ch.socket(), host.getHost(), host.getPort());
                h.in = new BufferedInputStream(tls.getInputStream(), 64 * 1024);
                h.stdin = new TlsOutput(tls);
            } else {
                h.in = new BufferedInputStream(new ChannelInput(ch), 64 * 1024);
                h.stdin = new ChannelOutput(ch);
            }
            String request = "POST " + path + " HTTP/1.1\r\n"
                    + "Host: docker\r\n"
                    + "User-Agent: airlock\r\n"
                    + "Content-Type: application/json\r\n"
                    + "Content-Length: " + body.length + "\r\n"
                    + "Connection: Upgrade\r\n"
                    + "Upgrade: tcp\r\n"
                    + "\r\n";
            h.stdin.write(request.getBytes(StandardCharsets.US_ASCII));
            h.stdin.write(body);
            h.readResponseHead();
            if (!guard.cancel(false)) {
                throw new AsynchronousCloseException(); // the deadline passed just as the answer came
            }
            return h;
        } catch (IOException | RuntimeException e) {
            guard.cancel(false);
            h.close();
            if (h.deadlinePassed && !Thread.currentThread().isInterrupted()) {
                throw new NoAnswer("the Docker daemon at " + host + " did not answer " + what + " within " + deadline.toMillis() + " ms");
            }
            throw e;
        }
    }

    private static void connect(SocketChannel ch, URI host, Duration timeout) throws IOException {
        try {
            if ("unix".equals(host.getScheme())) {
                ch.connect(UnixDomainSocketAddress.of(host.getPath()));
                return;
            }
            ch.socket().connect(new InetSocketAddress(host.getHost(), host.getPort()), (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            ch.socket().setTcpNoDelay(true);
            keepAlive(ch);
        } catch (AsynchronousCloseException e) {
            throw e;
        } catch (IOException e) {
            throw new IOException("cannot connect to the Docker daemon at " + host + ": " + e.getMessage(), e);
        }
    }

    /**
     * TCP keep-alive probes after 30 s of silence: a command may print nothing for hours, and a
     * connection dropped without a FIN (a NAT or firewall forgetting it) would otherwise block its
     * reader forever. Dead after about a minute of unanswered probes, where the platform allows tuning.
     */
    private static void keepAlive(SocketChannel ch) throws IOException {
        ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
        setIfSupported(ch, ExtendedSocketOptions.TCP_KEEPIDLE, 30);
        setIfSupported(ch, ExtendedSocketOptions.TCP_KEEPINTERVAL, 10);
        setIfSupported(ch, ExtendedSocketOptions.TCP_KEEPCOUNT, 3);
    }

    private static <T> void setIfSupported(SocketChannel ch, SocketOption<T> option, T value) throws IOException {
        if (ch.supportedOptions().contains(option)) {
            ch.setOption(option, value);
        }
    }

    /** For tests: the keep-alive idle time of a TCP connection in seconds, or -1 when keep-alive is off. */
    int keepAliveIdleSeconds() throws IOException {
        if (!channel.getOption(StandardSocketOptions.SO_KEEPALIVE)) {
            return -1;
        }
        return channel.supportedOptions().contains(ExtendedSocketOptions.TCP_KEEPIDLE)
                ? channel.getOption(ExtendedSocketOptions.TCP_KEEPIDLE) : 0;
    }

    private void readResponseHead() throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int state = 0; // how much of "\r\n\r\n" has been seen
        while (state < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the Docker daemon closed the connection before answering the exec start");
            }
            head.write(b);
            if (head.size() > MAX_HEAD) {
                throw new IOException("the Docker daemon's answer to the exec start is not HTTP");
            }
            state = (b == '\r' && (state == 0 || state == 2)) || (b == '\n' && (state == 1 || state == 3)) ? state + 1
                    : b == '\r' ? 1 : 0;
        }
        String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
        String[] status = lines[0].split(" ", 3);
        int code;
        try {
            code = Integer.parseInt(status.length > 1 ? status[1] : "");
        } catch (NumberFormatException e) {
            throw new IOException("unexpected answer from the Docker daemon: " + lines[0]);
        }
        if (code == 101 || code == 200) {
            return;
        }
        long length = -1;
        for (String line : lines) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().toLowerCase(Locale.ROOT).equals("content-length")) {
                length = Long.parseLong(line.substring(colon + 1).trim());
            }
        }
        byte[] body = in.readNBytes((int) Math.min(length < 0 ? MAX_HEAD : length, MAX_HEAD));
        throw new ApiError(code, message(body, code));
    }

    private static String message(byte[] body, int code) {
        String text = new String(body, StandardCharsets.UTF_8).strip();
        var m = MESSAGE.matcher(text);
        if (m.find()) {
            return m.group(1).replace("\\\"", "\"").replace("\\\\", "\\");
        }
        return text.isEmpty() ? "HTTP " + code : text;
    }

    /** Raw stdin of the command; {@code close()} half-closes the connection: end-of-input. */
    OutputStream stdin() {
        return stdin;
    }

    /**
     * Reads the next frame's header: returns its stream type and leaves its payload length in
     * {@link #payloadLength}, or -1 at the end of the stream.
     */
    int nextFrame() throws IOException {
        int n = in.readNBytes(header, 0, 8);
        if (n == 0) {
            return -1;
        }
        if (n < 8) {
            throw new EOFException("the exec stream ended inside a frame header");
        }
        payloadLength = ((header[4] & 0xffL) << 24) | ((header[5] & 0xff) << 16) | ((header[6] & 0xff) << 8) | (header[7] & 0xff);
        return header[0] & 0xff;
    }

    /** Reads up to {@code len} bytes of the current frame's payload; EOF inside a frame is an error. */
    int readPayload(byte[] b, int off, int len) throws IOException {
        int n = in.read(b, off, len);
        if (n < 0) {
            throw new EOFException("the exec stream ended inside a frame");
        }
        return n;
    }

    boolean isClosed() {
        return closed.get();
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing a socket: nothing left to do
            }
        }
    }

    /** Blocking reads straight from the channel (reads and writes may run on two threads at once). */
    private static final class ChannelInput extends BulkInputStream {
        private final SocketChannel ch;

        ChannelInput(SocketChannel ch) {
            this.ch = ch;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            int n;
            do {
                n = ch.read(ByteBuffer.wrap(b, off, len));
            } while (n == 0);
            return n;
        }
    }

    /**
     * Writes through TLS; {@code close()} half-closes as {@link ChannelOutput} does: TLS 1.3 sends
     * its close_notify and keeps reading, so the daemon sees end-of-input and the output still comes.
     */
    private static final class TlsOutput extends OutputStream {
        private final SSLSocket socket;
        private final OutputStream out;
        private final AtomicBoolean shut = new AtomicBoolean();

        TlsOutput(SSLSocket socket) throws IOException {
            this.socket = socket;
            this.out = socket.getOutputStream();
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
        }

        @Override
        public void close() throws IOException {
            if (shut.compareAndSet(false, true) && !socket.isClosed()) {
                socket.shutdownOutput();
            }
        }
    }

    private static final class ChannelOutput extends OutputStream {
        private final SocketChannel ch;
        private final AtomicBoolean shut = new AtomicBoolean();

        ChannelOutput(SocketChannel ch) {
            this.ch = ch;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            ByteBuffer buf = ByteBuffer.wrap(b, off, len);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
        }

        /** End-of-input: half-close, as the Docker CLI does; the daemon then closes the command's stdin. */
        @Override
        public void close() throws IOException {
            if (shut.compareAndSet(false, true)) {
                try {
                    ch.shutdownOutput();
                } catch (ClosedChannelException ignored) {
                    // the whole connection is already closed
                }
            }
        }
    }
}
