package dev.airlock.ssh;

import com.jcraft.jsch.Channel;
import com.jcraft.jsch.ChannelDirectTCPIP;
import com.jcraft.jsch.ChannelExec;
import com.jcraft.jsch.JSch;
import com.jcraft.jsch.JSchException;
import com.jcraft.jsch.Session;
import dev.airlock.DispatchOutcomeUnknownException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A small pool of SSH connections to one host. Each exec gets its own channel; a connection
 * carries at most {@code channels-per-connection} of them (OpenSSH refuses more than MaxSessions,
 * 10 by default), so more concurrent execs open another connection. A dropped connection is
 * dropped from the pool and the next exec logs in again. Logins are serialized: concurrent execs
 * that all need a new connection share the first one made.
 */
final class Connections implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Connections.class);
    private static final int OPEN_ATTEMPTS = 3;
    /**
     * What each channel offers the server, as OpenSSH's own client does (32 KiB packets, a 2 MiB
     * window; JSch's defaults are 16 KiB and 1 MiB). Twice the packets per byte cost JSch a
     * decryption set-up, a read and a hand-off each: 1 GiB of stdout took 3.2 s with the
     * defaults and 2.4 s with these, against 3.0 s for OpenSSH. Memory is not the window's: JSch
     * hands each packet to the channel's {@link ChannelBuffer} and reopens the window after.
     */
    static final int PACKET = 32 * 1024;
    static final int WINDOW = 2 * 1024 * 1024;

    private final SshSettings settings;
    private final JSch jsch;
    private final HostKeys hostKeys;
    private final List<Connection> pool = new ArrayList<>();
    private final ScheduledExecutorService watchdog;
    private final Object loginLock = new Object();
    private boolean closed;

    Connections(SshSettings settings, JSch jsch, HostKeys hostKeys) {
        this.settings = settings;
        this.jsch = jsch;
        this.hostKeys = hostKeys;
        this.watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "airlock-ssh-watchdog");
            t.setDaemon(true);
            return t;
        });
    }

    /** One login; channels are counted against its capacity while they are open. */
    private static final class Connection {
        final Session session;
        final Set<Lease> leases = new HashSet<>();
        int capacity;
        /** Unresponsive: takes no new channels, closed once its running ones end. */
        boolean retired;

        Connection(Session session, int capacity) {
            this.session = session;
            this.capacity = capacity;
        }

        int live() {
            leases.removeIf(Lease::done);
            return leases.size();
        }

        boolean stalled() {
            for (Lease l : leases) {
                if (l.stalled()) {
                    return true;
                }
            }
            return false;
        }
    }

    /** A channel slot on a connection, held from before the channel opens until it is released. */
    final class Lease {
        private final Connection connection;
        private volatile ChannelExec channel;
        private volatile ChannelBuffer[] buffers = new ChannelBuffer[0];
        private volatile boolean released;

        private Lease(Connection connection) {
            this.connection = connection;
        }

        boolean done() {
            ChannelExec c = channel;
            return released || (c != null && c.isClosed());
        }

        /** Its reader fell so far behind that JSch's thread waits: the whole connection is stalled. */
        boolean stalled() {
            for (ChannelBuffer b : buffers) {
                if (b.writerWaiting()) {
                    return true;
                }
            }
            return false;
        }

        void release() {
            ChannelExec c = channel;
            if (c != null) {
                c.disconnect();
            }
            Connections.this.release(this);
        }
    }

    /**
     * Opens an exec channel running {@code command}. The streams are taken before the channel
     * connects (JSch loses early output otherwise). Throws an {@link IOException} when the command
     * certainly did not start, {@link DispatchOutcomeUnknownException} when it may have.
     */
    SshProcess exec(byte[] command) throws IOException {
        IOException last = null;
        for (int attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
            Lease lease = acquire();
            ChannelExec ch;
            InputStream out;
            InputStream err;
            OutputStream in;
            try {
                ch = (ChannelExec) lease.connection.session.openChannel("exec");
                ch.setCommand(command);
                ch.setLocalPacketSize(PACKET);
                ch.setLocalWindowSizeMax(WINDOW);
                // Our buffers, not JSch's pipes: one slow reader must not stall the connection.
                ChannelBuffer outBuf = new ChannelBuffer(settings.outputBuffer());
                ChannelBuffer errBuf = new ChannelBuffer(settings.outputBuffer());
                ch.setOutputStream(outBuf.sink);
                ch.setExtOutputStream(errBuf.sink);
                lease.buffers = new ChannelBuffer[] {outBuf, errBuf};
                out = outBuf.source;
                err = errBuf.source;
                in = ch.getOutputStream();
            } catch (JSchException | IOException e) {
                lease.release();
                last = new IOException("cannot open an SSH channel: " + e.getMessage(), e);
                LOG.debug("opening an SSH channel failed ({}); trying again", e.getMessage());
                continue; // the session went down under us; acquire() drops it and logs in again
            }
            lease.channel = ch;
            long began = System.nanoTime();
            Future<?> nudge = watch(lease.connection.session, ch);
            try {
                ch.connect(timeoutMillis());
            } catch (JSchException e) {
                String m = String.valueOf(e.getMessage());
                boolean sessionUp = lease.connection.session.isConnected();
                lease.release();
                // ChannelExec.start() sends the exec request; its failures say "ChannelExec" (an I/O
                // error, wrapped) or "channel request: timeout". Every other failure of connect()
                // comes from opening the channel, before the command was sent.
                if (m.equals("ChannelExec") || m.equals("channel request: timeout")) {
                    throw new DispatchOutcomeUnknownException("the SSH connection to " + settings.display()
                            + " failed while the command was being sent (" + ConnectFailures.oneLine(causeOf(e))
                            + "); whether it started is unknown, so it was not sent again");
                }
                if (m.equals("failed to send channel request")) {
                    throw new IOException("the SSH server refused to run the command (exec request denied)", e);
                }
                // Not sent: the command did not run, so another connection may carry it.
                if (sessionUp && m.equals("channel is not opened.")) {
                    boolean unanswered = System.nanoTime() - began >= TimeUnit.MILLISECONDS.toNanos(timeoutMillis());
                    refused(lease.connection, unanswered);
                } else if (e.getCause() instanceof IOException) {
                    // The socket failed under the channel open (a cut connection JSch has not noticed
                    // yet): never hand this connection out again, so the retry logs in afresh.
                    broken(lease.connection);
                }
                last = new IOException("cannot open an SSH channel (" + ConnectFailures.oneLine(m) + ")", e);
                LOG.debug("opening an SSH channel failed before the command was sent ({}); trying again", m);
                continue;
            } finally {
                nudge.cancel(false);
            }
            return new SshProcess(ch, lease, in, out, err);
        }
        throw last;
    }

    /**
     * JSch waits for a channel's open confirmation in one {@code wait(timeout)} that nothing
     * wakes when the connection dies meanwhile; wake it, so it sees "session is down" at once
     * instead of after the whole connect timeout.
     */
    private Future<?> watch(Session session, Channel ch) {
        try {
            return watchdog.scheduleWithFixedDelay(() -> {
                if (!session.isConnected()) {
                    synchronized (ch) {
                        ch.notifyAll();
                    }
                }
            }, 100, 100, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.completedFuture(null); // closing: nothing to watch for
        }
    }

    private static String causeOf(Throwable e) {
        Throwable c = e.getCause() != null ? e.getCause() : e;
        return String.valueOf(c.getMessage() != null ? c.getMessage() : c);
    }

    private int timeoutMillis() {
        return (int) Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis());
    }

    /** A slot on a connection with room, logging in first when none has (one login at a time). */
    private Lease acquire() throws IOException {
        Lease l = tryLease();
        if (l != null) {
            return l;
        }
        synchronized (loginLock) {
            l = tryLease(); // another thread may have logged in meanwhile
            if (l != null) {
                return l;
            }
            Session session = login(); // not under the pool's lock: releases go on meanwhile
            synchronized (this) {
                if (closed) {
                    session.disconnect();
                    throw new IOException("the SSH connections of this environment are closed");
                }
                Connection c = new Connection(session, settings.channelsPerConnection());
                pool.add(c);
                return lease(c);
            }
        }
    }

    private synchronized Lease tryLease() throws IOException {
        if (closed) {
            throw new IOException("the SSH connections of this environment are closed");
        }
        for (Iterator<Connection> it = pool.iterator(); it.hasNext(); ) {
            Connection c = it.next();
            if (!c.session.isConnected() || (c.retired && c.live() == 0)) {
                it.remove();
                LOG.debug("dropping a lost SSH connection to {}", settings.display());
                c.session.disconnect();
            }
        }
        for (Connection c : pool) {
            if (!c.retired && c.live() < c.capacity && !c.stalled()) {
                return lease(c);
            }
        }
        return null;
    }

    private Lease lease(Connection c) {
        Lease l = new Lease(c);
        c.leases.add(l);
        return l;
    }

    /**
     * A live connection refused a channel: it allows fewer than we assumed, so it keeps what it
     * carries. One that did not answer at all takes no new channels and closes when idle.
     */
    private synchronized void refused(Connection c, boolean unanswered) {
        if (unanswered) {
            c.retired = true;
            LOG.debug("an SSH connection to {} did not answer a channel request; using a new one", settings.display());
            closeIfIdle(c);
        } else {
            c.capacity = Math.max(1, c.live());
            LOG.debug("the SSH server allows {} channels per connection; opening another connection for more", c.capacity);
        }
    }

    private synchronized void broken(Connection c) {
        c.retired = true;
        LOG.debug("an SSH connection to {} failed under a channel open; using a new one", settings.display());
        closeIfIdle(c);
    }

    private void closeIfIdle(Connection c) {
        if (c.live() == 0 && pool.remove(c)) {
            c.session.disconnect();
        }
    }

    private synchronized void release(Lease lease) {
        if (lease.released) {
            return;
        }
        lease.released = true;
        Connection c = lease.connection;
        c.leases.remove(lease);
        if (c.live() > 0 || !pool.contains(c)) {
            return;
        }
        if (c.retired) {
            closeIfIdle(c);
            return;
        }
        // Keep one idle connection for the next exec; close the other idle ones.
        for (Connection other : pool) {
            if (other != c && !other.retired && other.session.isConnected() && other.live() == 0) {
                pool.remove(c);
                c.session.disconnect();
                return;
            }
        }
    }

    private Session login() {
        com.jcraft.jsch.Proxy proxy = null;
        if (!settings.jumps().isEmpty()) {
            proxy = new Proxies.Jump(settings.jumps(), (hop, through) -> open(settings.forHop(hop), through));
        } else if (settings.proxyCommand().isPresent()) {
            proxy = new Proxies.Command(settings.proxyCommand().get(), settings.user());
        }
        return open(settings, proxy);
    }

    /** One login to {@code s}'s host, directly or through {@code proxy}; failures are one line naming that host. */
    private Session open(SshSettings s, com.jcraft.jsch.Proxy proxy) {
        Session session;
        try {
            session = jsch.getSession(s.user(), s.host(), s.port());
        } catch (JSchException e) {
            throw ConnectFailures.map(e, s, hostKeys);
        }
        session.setConfig("StrictHostKeyChecking", "yes");
        // With a password set, keyboard-interactive and password follow the keys, in OpenSSH's order.
        session.setConfig("PreferredAuthentications", s.password().isPresent() ? "publickey,keyboard-interactive,password" : "publickey");
        s.password().map(PasswordPrompts::new).ifPresent(session::setUserInfo);
        session.setDaemonThread(true);
        if (proxy != null) {
            session.setProxy(proxy);
        }
        try {
            if (!s.keepalive().isZero()) {
                session.setServerAliveInterval((int) Math.min(Integer.MAX_VALUE, s.keepalive().toMillis()));
                session.setServerAliveCountMax(s.keepaliveCount());
            }
            session.connect(timeoutMillis());
        } catch (JSchException e) {
            java.util.Optional<String> proxyFailure = proxy instanceof Proxies.Command c ? c.failure() : java.util.Optional.empty();
            if (proxy != null) {
                proxy.close();
            }
            if (proxyFailure.isPresent()) {
                throw new dev.airlock.BackendUnavailableException("the ProxyCommand for " + s.display() + " "
                        + ConnectFailures.oneLine(proxyFailure.get()) + "; check the ProxyCommand in the SSH config ("
                        + SshSettings.CONFIG + ")");
            }
            throw ConnectFailures.map(e, s, hostKeys);
        }
        LOG.debug("logged in to {}", s.display());
        return session;
    }

    /** The exposed ports' listeners, by the local port each listens on. */
    private final Map<Integer, PortTunnel> tunnels = new HashMap<>();

    /**
     * A local forward to {@code 127.0.0.1:remotePort} on the host (OpenSSH's
     * {@code ssh -L 0:127.0.0.1:PORT}): a listener on this machine's 127.0.0.1, on a port the
     * system picks, whose every connection is a channel on the pool's connection of the moment, so
     * the forward outlives a dropped login. Returns the local port.
     */
    int forward(int remotePort) throws IOException {
        PortTunnel t = PortTunnel.open(this, remotePort, settings.display());
        synchronized (this) {
            if (closed) {
                t.close();
                throw new IOException("the SSH connections of this environment are closed");
            }
            tunnels.put(t.localPort(), t);
        }
        return t.localPort();
    }

    /** Ends the forward listening on {@code localPort} and the connections it carries. */
    void unforward(int localPort) {
        PortTunnel t;
        synchronized (this) {
            t = tunnels.remove(localPort);
        }
        if (t != null) {
            t.close();
        }
    }

    /** A direct-tcpip channel and the slot it holds; closing it ends the channel and lets the slot go. */
    final class Stream implements AutoCloseable {
        final InputStream in;
        final OutputStream out;
        private final Channel channel;
        private final Lease lease;

        private Stream(Channel channel, Lease lease, InputStream in, OutputStream out) {
            this.channel = channel;
            this.lease = lease;
            this.in = in;
            this.out = out;
        }

        @Override
        public void close() {
            channel.disconnect();
            lease.release();
            try {
                in.close(); // lets go of the buffer's spill file, if it made one
            } catch (IOException e) {
                // nothing held
            }
        }
    }

    /**
     * A channel to {@code 127.0.0.1:remotePort} on the host, on a connection with room (a lost one
     * is replaced, as for an exec). The host's refusal (nothing listens there, or forwarding is off
     * in its sshd) is an {@link IOException} in one line.
     */
    Stream connectTo(int remotePort) throws IOException {
        IOException last = null;
        for (int attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
            Lease lease = acquire();
            ChannelDirectTCPIP ch;
            InputStream in;
            OutputStream out;
            try {
                ch = (ChannelDirectTCPIP) lease.connection.session.openChannel("direct-tcpip");
                ch.setHost("127.0.0.1");
                ch.setPort(remotePort);
                ch.setLocalPacketSize(PACKET);
                ch.setLocalWindowSizeMax(WINDOW);
                // As for an exec: our buffer, not JSch's pipe, so a client that reads slowly does
                // not stall the connection's other channels.
                ChannelBuffer buf = new ChannelBuffer(settings.outputBuffer());
                ch.setOutputStream(buf.sink);
                lease.buffers = new ChannelBuffer[] {buf};
                in = buf.source;
                out = ch.getOutputStream();
            } catch (JSchException | IOException e) {
                lease.release();
                last = new IOException("cannot open an SSH channel: " + e.getMessage(), e);
                continue; // the session went down under us; acquire() drops it and logs in again
            }
            Future<?> nudge = watch(lease.connection.session, ch);
            try {
                ch.connect(timeoutMillis());
                return new Stream(ch, lease, in, out);
            } catch (JSchException e) {
                boolean sessionUp = lease.connection.session.isConnected();
                ch.disconnect();
                lease.release();
                if (sessionUp && !(e.getCause() instanceof IOException)) {
                    throw new IOException(settings.display() + " refused a connection to its port " + remotePort
                            + " (" + ConnectFailures.oneLine(String.valueOf(e.getMessage())) + "): nothing listens there,"
                            + " or its sshd does not allow TCP forwarding");
                }
                broken(lease.connection);
                last = new IOException("cannot open an SSH channel (" + ConnectFailures.oneLine(String.valueOf(e.getMessage())) + ")", e);
            } finally {
                nudge.cancel(false);
            }
        }
        throw last;
    }

    /** For tests: how many logins are open. */
    synchronized int openConnections() {
        int n = 0;
        for (Connection c : pool) {
            if (c.session.isConnected()) {
                n++;
            }
        }
        return n;
    }

    @Override
    public void close() {
        List<PortTunnel> ending;
        synchronized (this) {
            closed = true;
            ending = new ArrayList<>(tunnels.values());
            tunnels.clear();
        }
        ending.forEach(PortTunnel::close);
        closeConnections();
    }

    private synchronized void closeConnections() {
        watchdog.shutdownNow();
        for (Connection c : pool) {
            c.session.disconnect();
        }
        pool.clear();
    }
}
