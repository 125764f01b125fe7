package dev.airlock.ssh;

import com.jcraft.jsch.Channel;
import com.jcraft.jsch.Proxy;
import com.jcraft.jsch.Session;
import com.jcraft.jsch.SocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The two ways the SSH config reaches a host indirectly: ProxyJump and ProxyCommand. */
final class Proxies {
    private static final Logger LOG = LoggerFactory.getLogger(Proxies.class);

    private Proxies() {
    }

    /** Opens the login to a jump host (itself possibly through the hops before it). */
    interface HopLogin {
        Session login(SshSettings.Hop hop, Proxy through) throws Exception;
    }

    /**
     * {@code ProxyJump}: logs in to each hop in turn, each through the one before, and reaches the
     * target over a {@code direct-tcpip} channel of the last. Closing it logs out of every hop.
     */
    static final class Jump implements Proxy {
        private final List<SshSettings.Hop> hops;
        private final HopLogin login;
        private Session last;
        private Forward target;

        Jump(List<SshSettings.Hop> hops, HopLogin login) {
            this.hops = hops;
            this.login = login;
        }

        @Override
        public void connect(SocketFactory factory, String host, int port, int timeout) throws Exception {
            Proxy through = null;
            for (SshSettings.Hop hop : hops) {
                last = login.login(hop, through);
                through = new Forward(last);
            }
            // The last hop to the target is one more forward step; closing it logs out of the last
            // hop, whose own proxy closes the hops before it.
            target = new Forward(last);
            target.connect(factory, host, port, timeout);
        }

        @Override
        public InputStream getInputStream() {
            return target.getInputStream();
        }

        @Override
        public OutputStream getOutputStream() {
            return target.getOutputStream();
        }

        @Override
        public Socket getSocket() {
            return null;
        }

        @Override
        public void close() {
            if (target != null) {
                target.close();
            } else if (last != null) {
                last.disconnect(); // a login failed part way: its own proxy closes the hops before it
            }
        }
    }

    /** The step from one hop to the next: a direct-tcpip channel of a session already logged in. */
    private static final class Forward implements Proxy {
        private final Session via;
        private Channel channel;
        private InputStream in;
        private OutputStream out;

        Forward(Session via) {
            this.via = via;
        }

        @Override
        public void connect(SocketFactory factory, String host, int port, int timeout) throws Exception {
            channel = via.getStreamForwarder(host, port);
            in = channel.getInputStream();
            out = channel.getOutputStream();
            channel.connect(timeout);
        }

        @Override
        public InputStream getInputStream() {
            return in;
        }

        @Override
        public OutputStream getOutputStream() {
            return out;
        }

        @Override
        public Socket getSocket() {
            return null;
        }

        @Override
        public void close() {
            if (channel != null) {
                channel.disconnect();
            }
            via.disconnect();
        }
    }

    /**
     * {@code ProxyCommand}: {@code sh -c COMMAND} on this machine, with OpenSSH's {@code %h},
     * {@code %p}, {@code %r} and {@code %%}; its stdin and stdout carry the connection.
     */
    static final class Command implements Proxy {
        private final String template;
        private final String user;
        private static final int STDERR_KEPT = 2048;
        private final java.io.ByteArrayOutputStream stderr = new java.io.ByteArrayOutputStream();
        private Process process;
        private Thread drain;

        Command(String template, String user) {
            this.template = template;
            this.user = user;
        }

        static String expand(String template, String host, int port, String user) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < template.length(); i++) {
                char c = template.charAt(i);
                if (c == '%' && i + 1 < template.length()) {
                    char t = template.charAt(++i);
                    switch (t) {
                        case 'h' -> sb.append(host);
                        case 'p' -> sb.append(port);
                        case 'r' -> sb.append(user);
                        case '%' -> sb.append('%');
                        default -> sb.append('%').append(t);
                    }
                } else {
                    sb.append(c);
                }
            }
            return sb.toString();
        }

        @Override
        public void connect(SocketFactory factory, String host, int port, int timeout) throws IOException {
            process = new ProcessBuilder("sh", "-c", expand(template, host, port, user)).start();
            drain = new Thread(this::keepStderr, "airlock-ssh-proxycommand-stderr");
            drain.setDaemon(true);
            drain.start();
        }

        /** The command's stderr, its last {@link #STDERR_KEPT} bytes kept for a failure's message. */
        private void keepStderr() {
            byte[] buf = new byte[4096];
            try (InputStream err = process.getErrorStream()) {
                for (int n; (n = err.read(buf)) > 0; ) {
                    synchronized (stderr) {
                        stderr.write(buf, 0, n);
                        if (stderr.size() > STDERR_KEPT) {
                            byte[] all = stderr.toByteArray();
                            stderr.reset();
                            stderr.write(all, all.length - STDERR_KEPT, STDERR_KEPT);
                        }
                    }
                }
            } catch (IOException e) {
                LOG.debug("reading the ProxyCommand's stderr: {}", e.getMessage());
            }
        }

        /**
         * Why the login through this command failed, when it was the command: it exited (within a
         * moment) with a status other than 0, or printed an error; its last stderr line says why,
         * as OpenSSH shows it, instead of the "Broken pipe" the connection saw.
         */
        java.util.Optional<String> failure() {
            if (process == null) {
                return java.util.Optional.empty();
            }
            try {
                if (!process.waitFor(1, TimeUnit.SECONDS)) {
                    return java.util.Optional.empty();
                }
                drain.join(1000); // its stderr to the end (a child of its own may hold the pipe: not for long)
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return java.util.Optional.empty();
            }
            String last;
            synchronized (stderr) {
                String text = stderr.toString(java.nio.charset.StandardCharsets.UTF_8).strip();
                last = text.isEmpty() ? "" : text.substring(text.lastIndexOf('\n') + 1).strip();
            }
            int exit = process.exitValue();
            return java.util.Optional.of("exited " + exit + (last.isEmpty() ? "" : ": " + last));
        }

        @Override
        public InputStream getInputStream() {
            return process.getInputStream();
        }

        @Override
        public OutputStream getOutputStream() {
            return process.getOutputStream();
        }

        @Override
        public Socket getSocket() {
            return null;
        }

        @Override
        public void close() {
            if (process == null) {
                return;
            }
            // JSch closes the proxy when the login fails, often as the command is exiting: keep its last
            // words for failure() before destroy() closes its stderr under the reader.
            try {
                if (process.waitFor(100, TimeUnit.MILLISECONDS)) {
                    drain.join(1000);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process.destroy();
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
            LOG.debug("the ProxyCommand ended");
        }
    }
}
