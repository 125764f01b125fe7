package dev.airlock.exec;

import dev.airlock.Capabilities;
import dev.airlock.ConfigurationException;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.PortSupport;
import dev.airlock.StdinMode;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.PortForwarder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The core's side of {@code Environment.ports()}: the checks, the list, and every forward ended at close. */
class CorePortsTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final HostBackends opened = new HostBackends();


    /** A host backend whose forwarder notes what it opens and closes. */
    static final class Forwarding extends HostBackend {
        /** Not initialised here: the core asks for the forwarder while the super constructor opens. */
        private List<String> calls;

        Forwarding(Settings settings, PortSupport support) {
            super(settings, Capabilities.pipe().withPorts(support), List.of());
        }

        synchronized List<String> calls() {
            if (calls == null) {
                calls = new CopyOnWriteArrayList<>();
            }
            return calls;
        }

        @Override
        public Optional<PortForwarder> portForwarder() {
            return Optional.of(new PortForwarder() {
                @Override
                public URI open(int port, Deadline deadline) {
                    calls().add("open " + port);
                    return URI.create("http://127.0.0.1:" + (40000 + port) + "/");
                }

                @Override
                public void close(int port, URI uri) {
                    calls().add("close " + port + " " + uri.getPort());
                }
            });
        }
    }

    @Test
    void aBackendThatSaysNothingExposesNoPortAndSaysSoInOneLine() {
        HostBackend b = new HostBackend(HostBackend.settings(dir), StdinMode.PIPE, true, List.of());
        opened.add(b);
        assertEquals(PortSupport.NONE, b.env.capabilities().ports());
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> b.env.ports().expose(3000));
        assertEquals("the host backend does not expose ports (its capabilities declare none); choose a backend that does"
                + " (local, docker, ssh, modal, daytona and vercel all do)", e.getMessage());
    }

    @Test
    void aPortOutsideTheTcpRangeIsOneLine() {
        Forwarding b = new Forwarding(HostBackend.settings(dir), PortSupport.ANY);
        opened.add(b);
        for (int bad : new int[] {0, -5, 65536}) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> b.env.ports().expose(bad));
            assertEquals("port " + bad + " is not a TCP port; use a port from 1 to 65535", e.getMessage());
        }
        assertEquals(List.of(), b.calls(), "nothing reaches the backend for a bad port");
    }

    @Test
    void eachPortIsOpenedOnceListedClosedAndEveryForwardEndsWithTheEnvironment() {
        Forwarding b = new Forwarding(HostBackend.settings(dir), PortSupport.ANY);
        opened.add(b);
        URI a = b.env.ports().expose(3000);
        assertEquals(a, b.env.ports().expose(3000), "the same URL again");
        URI c = b.env.ports().expose(8080);
        assertEquals(Map.of(3000, a, 8080, c), b.env.ports().list());
        b.env.ports().close(3000);
        b.env.ports().close(3000); // not exposed any more: nothing happens
        assertEquals(Map.of(8080, c), b.env.ports().list());
        b.env.close();
        assertEquals(List.of("open 3000", "open 8080", "close 3000 43000", "close 8080 48080"), b.calls());
        assertEquals(Map.of(), b.env.ports().list());
        assertThrows(EnvironmentClosedException.class, () -> b.env.ports().expose(3000));
    }

    @Test
    void aWordInAirlockPortsThatIsNoPortIsOneLineAtOpen() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> new Forwarding(HostBackend.settings(dir, "airlock.ports", "3000,web"), PortSupport.DECLARED));
        assertEquals("airlock.ports holds 'web', which is not a port; list ports from 1 to 65535, comma-separated"
                + " (airlock.ports=3000,8080)", e.getMessage());
        ConfigurationException range = assertThrows(ConfigurationException.class,
                () -> new Forwarding(HostBackend.settings(dir, "airlock.ports", "70000"), PortSupport.DECLARED));
        assertEquals("airlock.ports holds 70000, which is not a TCP port; list ports from 1 to 65535, comma-separated"
                + " (airlock.ports=3000,8080)", range.getMessage());
    }
}
