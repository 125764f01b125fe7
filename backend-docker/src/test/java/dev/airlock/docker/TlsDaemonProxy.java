package dev.airlock.docker;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * The real daemon behind TLS, as {@code dockerd --tlsverify} serves it: a loopback listener that
 * requires a client certificate signed by the test CA, then forwards the connection to the
 * daemon's unix socket, half-closes included. Its certificates are made with {@code openssl},
 * as Docker's documentation makes them.
 */
final class TlsDaemonProxy implements AutoCloseable {
    private final SSLServerSocket server;
    private final Path socket;
    private final List<Socket> open = new CopyOnWriteArrayList<>();

    /** Test certificates: a CA, the daemon's (for 127.0.0.1), and a client's (written as docker expects it in {@code client}). */
    record Certificates(Path ca, Path serverP12, Path client) {
        static Certificates make(Path dir) throws IOException, InterruptedException {
            Path client = Files.createDirectories(dir.resolve("client"));
            String script = "set -e; cd \"$1\"\n"
                    + "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out ca.pem -days 2 -subj /CN=airlock-test-ca\n"
                    + "openssl req -newkey rsa:2048 -nodes -keyout server-key.pem -out server.csr -subj /CN=127.0.0.1\n"
                    + "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > server.ext\n"
                    + "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out server-cert.pem -days 2 -extfile server.ext\n"
                    + "openssl pkcs12 -export -in server-cert.pem -inkey server-key.pem -out server.p12 -passout pass:test\n"
                    // The client key in the older PKCS#1 form ('BEGIN RSA PRIVATE KEY'), as many docker setups still have it.
                    + "openssl genrsa -traditional -out client/key.pem 2048 2>/dev/null || openssl genrsa -out client/key.pem 2048\n"
                    + "openssl req -new -key client/key.pem -out client.csr -subj /CN=client\n"
                    + "printf 'extendedKeyUsage=clientAuth\\n' > client.ext\n"
                    + "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out client/cert.pem -days 2 -extfile client.ext\n"
                    + "cp ca.pem client/ca.pem\n";
            Process p = new ProcessBuilder("sh", "-c", script, "sh", dir.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException("openssl could not make the test certificates: " + out);
            }
            return new Certificates(dir.resolve("ca.pem"), dir.resolve("server.p12"), client);
        }
    }

    TlsDaemonProxy(Certificates certs, Path socket) throws Exception {
        this.socket = socket;
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(certs.serverP12())) {
            keys.load(in, "test".toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, "test".toCharArray());
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(certs.ca())) {
            trust.setCertificateEntry("ca", (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        server = (SSLServerSocket) context.getServerSocketFactory().createServerSocket(0, 50, InetAddress.getLoopbackAddress());
        server.setNeedClientAuth(true);
        Thread t = new Thread(this::accept, "tls-proxy-accept");
        t.setDaemon(true);
        t.start();
    }

    String url() {
        return "tcp://127.0.0.1:" + server.getLocalPort();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                SSLSocket client = (SSLSocket) server.accept();
                open.add(client);
                Thread t = new Thread(() -> serve(client), "tls-proxy-serve");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(SSLSocket client) {
        try (client; SocketChannel daemon = SocketChannel.open(java.net.UnixDomainSocketAddress.of(socket))) {
            client.startHandshake(); // a client without a certificate from the CA fails here
            Thread up = new Thread(() -> copy(client, daemon), "tls-proxy-up");
            up.setDaemon(true);
            up.start();
            // The channel itself, not Channels' streams: those lock the channel for reads and writes alike.
            OutputStream toClient = client.getOutputStream();
            ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
            while (daemon.read(buf.clear()) >= 0) {
                toClient.write(buf.array(), 0, buf.position());
            }
            toClient.flush();
            up.join(TimeUnit.MINUTES.toMillis(10));
        } catch (IOException | InterruptedException e) {
            // the connection ended; the client sees the close
        }
    }

    /** Client to daemon; the client's end of input (its TLS close_notify) half-closes the daemon side. */
    private static void copy(SSLSocket client, SocketChannel daemon) {
        try {
            InputStream in = client.getInputStream();
            byte[] buf = new byte[64 * 1024];
            int n;
            while ((n = in.read(buf)) >= 0) {
                ByteBuffer b = ByteBuffer.wrap(buf, 0, n);
                while (b.hasRemaining()) {
                    daemon.write(b);
                }
            }
            daemon.shutdownOutput();
        } catch (IOException e) {
            // the connection ended
            // the connection ended
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : open) {
            s.close();
        }
    }
}
