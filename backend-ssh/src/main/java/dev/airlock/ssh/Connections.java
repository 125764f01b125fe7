package dev.airlock.ssh;

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
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

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

    private final SshSettings settings;
    private final JSch jsch;
    private final HostKeys hostKeys;
    private final List<Connection> pool = new ArrayList<>();
    private boolean closed;

    Connections(SshSettings settings, JSch jsch, HostKeys hostKeys) {
        this.settings = settings;
        this.jsch = jsch;
        this.hostKeys = hostKeys;
    }

    /** One login; channels are counted against its capacity while they are open. */
    private static final class Connection {
        final Session session;
        final Set<Lease> leases = new HashSet<>();
        int capacity;

        Connection(Session session, int capacity) {
            this.session = session;
            this.capacity = capacity;
        }

        int live() {
            leases.removeIf(Lease::done);
            return leases.size();
        }
    }

    /** A channel slot on a connection, held from before the channel opens until it is released. */
    final class Lease {
        private final Connection connection;
        private volatile ChannelExec channel;
        private volatile boolean released;

        private Lease(Connection connection) {
            this.connection = connection;
        }

        boolean done() {
            ChannelExec c = channel;
            return released || (c != null && c.isClosed());
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
    SshProcess exec(byte[] command, String pgidMarker) throws IOException {
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
                out = ch.getInputStream();
                err = ch.getErrStream();
                in = ch.getOutputStream();
            } catch (JSchException | IOException e) {
                lease.release();
                last = new IOException("cannot open an SSH channel: " + e.getMessage(), e);
                continue; // the session went down under us; acquire() drops it and logs in again
            }
            lease.channel = ch;
            try {
                ch.connect(timeoutMillis());
            } catch (JSchException e) {
                String m = String.valueOf(e.getMessage());
                boolean sessionUp = lease.connection.session.isConnected();
                lease.release();
                if (m.equals("session is down") || m.equals("channel is not opened.")) {
                    // Refused before the exec request was sent: the command did not run, trying again is safe.
                    if (sessionUp) {
                        shrink(lease.connection);
                    }
                    last = new IOException("the SSH server refused a new channel (" + m + ")", e);
                    continue;
                }
                if (m.equals("failed to send channel request")) {
                    throw new IOException("the SSH server refused to run the command (exec request denied)", e);
                }
                throw new DispatchOutcomeUnknownException("the SSH connection to " + settings.display()
                        + " failed while the command was being sent (" + ConnectFailures.oneLine(m)
                        + "); whether it started is unknown, so it was not sent again");
            }
            return new SshProcess(ch, lease, in, out, new PgidMarkerStream(err, pgidMarker));
        }
        throw last;
    }

    private int timeoutMillis() {
        return (int) Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis());
    }

    private synchronized Lease acquire() throws IOException {
        if (closed) {
            throw new IOException("the SSH connections of this environment are closed");
        }
        for (Iterator<Connection> it = pool.iterator(); it.hasNext(); ) {
            Connection c = it.next();
            if (!c.session.isConnected()) {
                it.remove();
                LOG.debug("dropping a lost SSH connection to {}", settings.display());
                c.session.disconnect();
            }
        }
        for (Connection c : pool) {
            if (c.live() < c.capacity) {
                Lease l = new Lease(c);
                c.leases.add(l);
                return l;
            }
        }
        Connection c = new Connection(login(), settings.channelsPerConnection());
        pool.add(c);
        Lease l = new Lease(c);
        c.leases.add(l);
        return l;
    }

    /** The server refused a channel on a live connection: it allows fewer than we assumed. */
    private synchronized void shrink(Connection c) {
        c.capacity = Math.max(1, c.live());
        LOG.debug("the SSH server allows {} channels per connection; opening another connection for more", c.capacity);
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
        // Keep one idle connection for the next exec; close the other idle ones.
        for (Connection other : pool) {
            if (other != c && other.session.isConnected() && other.live() == 0) {
                pool.remove(c);
                c.session.disconnect();
                return;
            }
        }
    }

    private Session login() {
        Session s;
        try {
            s = jsch.getSession(settings.user(), settings.host(), settings.port());
        } catch (JSchException e) {
            throw ConnectFailures.map(e, settings, hostKeys);
        }
        s.setConfig("StrictHostKeyChecking", "yes");
        s.setConfig("PreferredAuthentications", "publickey");
        s.setDaemonThread(true);
        try {
            if (!settings.keepalive().isZero()) {
                s.setServerAliveInterval((int) Math.min(Integer.MAX_VALUE, settings.keepalive().toMillis()));
                s.setServerAliveCountMax(settings.keepaliveCount());
            }
            s.connect(timeoutMillis());
        } catch (JSchException e) {
            throw ConnectFailures.map(e, settings, hostKeys);
        }
        LOG.debug("logged in to {}", settings.display());
        return s;
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
    public synchronized void close() {
        closed = true;
        for (Connection c : pool) {
            c.session.disconnect();
        }
        pool.clear();
    }
}
