package dev.airlock.exec;

import dev.airlock.BackendException;
import dev.airlock.ConfigurationException;
import dev.airlock.PortSupport;
import dev.airlock.Ports;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.PortForwarder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * The environment's {@link Ports}: checks each port (1-65535, a backend that exposes ports), asks
 * the backend's {@link PortForwarder} once per port (a backend that needs ports declared at open
 * refuses the others there: docker reads what its container publishes), and ends every forward
 * when the environment closes, before the sandbox stops.
 */
final class CorePorts implements Ports {
    private static final Logger LOG = LoggerFactory.getLogger(CorePorts.class);
    /** How long one forward may take to open (an ssh round trip, a daemon's inspect). */
    private static final Duration OPEN_BOUND = Duration.ofSeconds(30);

    private final CoreEnvironment env;
    private final Map<Integer, URI> open = new TreeMap<>();
    private boolean closed;

    CorePorts(CoreEnvironment env) {
        this.env = env;
    }

    @Override
    public URI expose(int port) {
        Ports.check(port);
        env.ensureOpen();
        PortSupport support = env.capabilities().ports();
        if (support == PortSupport.NONE) {
            throw new ConfigurationException("the " + env.name() + " backend does not expose ports (its capabilities"
                    + " declare none); choose a backend that does (local, docker, ssh, modal, daytona and vercel all do)");
        }
        PortForwarder forwarder = env.backend().portForwarder().orElseThrow();
        synchronized (this) {
            URI known = open.get(port);
            if (known != null) {
                return known;
            }
            if (closed) {
                env.ensureOpen();
            }
            URI uri;
            try {
                uri = forwarder.open(port, Deadline.in(OPEN_BOUND));
            } catch (InterruptedIOException e) {
                Thread.currentThread().interrupt();
                throw new BackendException("interrupted while exposing port " + port + " of " + env.name() + " " + env.id());
            } catch (IOException e) {
                throw new BackendException("could not expose port " + port + " of the " + env.name() + " sandbox "
                        + env.id() + ": " + e.getMessage(), e);
            }
            open.put(port, uri);
            return uri;
        }
    }

    @Override
    public synchronized Map<Integer, URI> list() {
        return Collections.unmodifiableMap(new TreeMap<>(open));
    }

    @Override
    public void close(int port) {
        URI uri;
        synchronized (this) {
            uri = open.remove(port);
        }
        if (uri != null) {
            closeQuietly(port, uri);
        }
    }

    /** At the environment's close: every forward ends, and no new one opens. */
    void closeAll() {
        Map<Integer, URI> all;
        synchronized (this) {
            closed = true;
            all = new TreeMap<>(open);
            open.clear();
        }
        all.forEach(this::closeQuietly);
    }

    private void closeQuietly(int port, URI uri) {
        try {
            env.backend().portForwarder().ifPresent(f -> f.close(port, uri));
        } catch (RuntimeException e) {
            LOG.warn("ending the forward of port {} of {} {} failed: {}", port, env.name(), env.id(), e.getMessage());
        }
    }
}
