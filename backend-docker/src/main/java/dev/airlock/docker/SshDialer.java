package dev.airlock.docker;

import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * An {@code ssh://[USER@]HOST[:PORT]} daemon, reached as the Docker CLI reaches it: each connection
 * is {@code ssh HOST docker system dial-stdio} on the far side, which joins its stdio to the remote
 * daemon's socket. Here that is a unix socket in a private directory of this JVM (0700), which the
 * Docker client and {@link HijackedExec} connect to as to a local daemon; behind it, one OpenSSH
 * master connection (started here, our child, ended at {@link #close}) carries every connection,
 * so a connection costs a channel, not a login.
 *
 * <p>OpenSSH does all of the ssh: the user's config, keys, agent and known hosts, or the config
 * file {@link DockerSettings#SSH_CONFIG} names ({@code ssh -F}). No secret is on a command line.
 * A login that fails is reported with ssh's own words when the daemon is first reached.
 */
final class SshDialer implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(SshDialer.class);
    /** How much of ssh's stderr a failed login reports. */
    private static final int STDERR_LIMIT = 4096;

    private final URI host;
    private final List<String> sshBase;
    private final Path dir;
    private final Path controlPath;
    private final Path socket;
    private final Process master;
    private final StringBuffer masterErr = new StringBuffer();
    private final ServerSocketChannel server;
    private final Set<Process> dials = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private SshDialer(URI host, List<String> sshBase, Path dir, Process master, ServerSocketChannel server) {
        this.host = host;
        this.sshBase = sshBase;
        this.dir = dir;
        this.controlPath = dir.resolve("cm");
        this.socket = dir.resolve("docker.sock");
        this.master = master;
        this.server = server;
    }

    /**
     * Logs in (the master connection) and opens the local socket; returns once the master is up.
     *
     * @throws BackendUnavailableException when ssh cannot log in within {@code timeout}, with ssh's words
     */
    static SshDialer start(URI host, Optional<Path> config, Duration timeout) {
        List<String> base = sshArgs(host, config);
        Path dir;
        try {
            dir = Files.createTempDirectory(socketBase(), "airlock-docker-ssh-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new BackendUnavailableException("cannot make a private directory for the ssh connection to " + host + ": " + e.getMessage());
        }
        Process master = null;
        ServerSocketChannel server = null;
        try {
            List<String> cmd = new ArrayList<>(List.of("ssh", "-M", "-N", "-o", "ControlPersist=no", "-o", "BatchMode=yes",
                    "-o", "ConnectTimeout=" + Math.max(1, timeout.toSeconds()), "-S", dir.resolve("cm").toString()));
            cmd.addAll(base);
            master = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(dir.resolve("docker.sock")));
            SshDialer d = new SshDialer(host, base, dir, master, server);
            d.awaitMaster(timeout);
            Thread accept = new Thread(d::accept, "airlock-docker-ssh-accept");
            accept.setDaemon(true);
            accept.start();
            return d;
        } catch (IOException | RuntimeException e) {
            if (master != null) {
                master.destroyForcibly();
            }
            closeQuietly(server);
            deleteQuietly(dir);
            if (e instanceof BackendUnavailableException b) {
                throw b;
            }
            throw new BackendUnavailableException("cannot start ssh for the Docker daemon at " + host + ": " + e.getMessage()
                    + "; check that OpenSSH's ssh is on the PATH");
        }
    }

    /**
     * Where the private directory goes: the JVM's temp dir, unless its path is so long that a
     * socket in it would pass the kernel's 108 bytes for a unix socket (or OpenSSH's ControlPath
     * limit), then {@code /tmp}.
     */
    private static Path socketBase() {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        return tmp.toString().length() <= 60 || !Files.isDirectory(Path.of("/tmp")) ? tmp : Path.of("/tmp");
    }

    /**
     * {@code [-F CONFIG] [-p PORT] -- [USER@]HOST}: the destination as the Docker CLI passes it. A
     * path or query in the URI is refused, as the Docker CLI refuses it.
     */
    static List<String> sshArgs(URI host, Optional<Path> config) {
        if (host.getHost() == null || (host.getRawPath() != null && !host.getRawPath().isEmpty()) || host.getRawQuery() != null) {
            throw new ConfigurationException("the ssh:// Docker host '" + host + "' is not ssh://[USER@]HOST[:PORT]");
        }
        List<String> args = new ArrayList<>();
        config.ifPresent(c -> {
            args.add("-F");
            args.add(c.toString());
        });
        if (host.getPort() > 0) {
            args.add("-p");
            args.add(Integer.toString(host.getPort()));
        }
        args.add("--");
        args.add((host.getRawUserInfo() == null ? "" : host.getUserInfo() + "@") + host.getHost());
        return List.copyOf(args);
    }

    /** Where the Docker client connects: {@code unix://} and the private socket. */
    URI localAddress() {
        return URI.create("unix://" + socket);
    }

    /** Waits for the master's control socket, or its end with ssh's stderr as the reason. */
    private void awaitMaster(Duration timeout) throws IOException {
        Thread err = new Thread(() -> collect(master.getErrorStream(), masterErr), "airlock-docker-ssh-master-err");
        err.setDaemon(true);
        err.start();
        long end = System.nanoTime() + timeout.toNanos();
        while (!Files.exists(controlPath)) {
            if (!master.isAlive()) {
                joinQuietly(err);
                throw new BackendUnavailableException("cannot log in to " + host + " for its Docker daemon: ssh said: "
                        + oneLine(masterErr.toString()) + "; check the host, your key or agent and known_hosts"
                        + " (or set " + DockerSettings.SSH_CONFIG + " to an ssh config file)");
            }
            if (System.nanoTime() > end) {
                throw new BackendUnavailableException("ssh to " + host + " for its Docker daemon did not log in within "
                        + timeout.toSeconds() + "s (" + DockerSettings.API_TIMEOUT + "); check the host and port");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while logging in to " + host);
            }
        }
    }

    private void accept() {
        while (!closed) {
            SocketChannel c;
            try {
                c = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                LOG.debug("the ssh dialer's socket failed: {}", e.getMessage());
                return;
            }
            try {
                dial(c);
            } catch (IOException e) {
                LOG.debug("could not dial the Docker daemon at {}: {}", host, e.getMessage());
                closeQuietly(c);
            }
        }
    }

    /** One connection: {@code docker system dial-stdio} over the master, its stdio joined to {@code c} both ways. */
    private void dial(SocketChannel c) throws IOException {
        // BatchMode here too: without the master (it died) ssh logs in anew, and must not prompt.
        List<String> cmd = new ArrayList<>(List.of("ssh", "-S", controlPath.toString(), "-o", "ControlMaster=no", "-o", "BatchMode=yes", "-T"));
        cmd.addAll(sshBase);
        cmd.addAll(List.of("docker", "system", "dial-stdio"));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        dials.add(p);
        // The channel itself, not Channels' streams: those lock the channel for a read, so a write
        // the other way would wait for it.
        Thread up = new Thread(() -> {
            try (OutputStream to = p.getOutputStream()) {
                ByteBuffer b = ByteBuffer.allocate(64 * 1024);
                while (c.read(b) >= 0) {
                    to.write(b.array(), 0, b.position());
                    to.flush();
                    b.clear();
                }
            } catch (IOException e) {
                // the client or ssh went away: the other direction ends too
            }
        }, "airlock-docker-ssh-up");
        Thread down = new Thread(() -> {
            try (InputStream from = p.getInputStream()) {
                byte[] b = new byte[64 * 1024];
                int n;
                while ((n = from.read(b)) > 0) {
                    ByteBuffer bb = ByteBuffer.wrap(b, 0, n);
                    while (bb.hasRemaining()) {
                        c.write(bb);
                    }
                }
                c.shutdownOutput();
            } catch (IOException e) {
                // as above
            } finally {
                end(p, c, up);
            }
        }, "airlock-docker-ssh-down");
        up.setDaemon(true);
        down.setDaemon(true);
        up.start();
        down.start();
    }

    /** Once the daemon's side ended: waits a moment for the client's side, then ends both. */
    private void end(Process p, SocketChannel c, Thread up) {
        joinQuietly(up, 2000);
        closeQuietly(c);
        p.destroy();
        try {
            if (!p.waitFor(2, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        dials.remove(p);
    }

    /** Ends every dial, the master and the socket, and removes the private directory. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        for (Process p : dials) {
            p.destroyForcibly();
        }
        master.destroy();
        try {
            if (!master.waitFor(2, TimeUnit.SECONDS)) {
                master.destroyForcibly();
            }
        } catch (InterruptedException e) {
            master.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        deleteQuietly(dir);
    }

    // ---------------------------------------------------------------- helpers

    private static void collect(InputStream in, StringBuffer into) {
        byte[] b = new byte[1024];
        try (in) {
            int n;
            while ((n = in.read(b)) > 0) {
                if (into.length() < STDERR_LIMIT) {
                    into.append(new String(b, 0, Math.min(n, STDERR_LIMIT - into.length()), StandardCharsets.UTF_8));
                }
            }
        } catch (IOException ignored) {
            // the master ended
        }
    }

    /** ssh's last non-empty line (its reason; earlier ones are warnings such as "Permanently added"). */
    static String oneLine(String stderr) {
        String last = "";
        for (String l : stderr.split("\r?\n")) {
            if (!l.isBlank()) {
                last = l.strip();
            }
        }
        return last.isEmpty() ? "nothing (it exited)" : last;
    }

    private static void joinQuietly(Thread t) {
        joinQuietly(t, 1000);
    }

    private static void joinQuietly(Thread t, long millis) {
        try {
            t.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    private static void deleteQuietly(Path dir) {
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            LOG.debug("could not remove {}: {}", dir, e.getMessage());
        }
    }
}
