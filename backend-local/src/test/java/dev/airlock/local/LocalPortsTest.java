package dev.airlock.local;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import dev.airlock.tck.Services;
import dev.airlock.tck.Http;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Local ports: the command's own port on this host's loopback under bubblewrap with the network on;
 * with the network off its port is in a namespace of its own, and expose says so in one line.
 */
class LocalPortsTest {
    private static final Settings BWRAP = Settings.of("airlock.container", "no", "airlock.local.isolation", "bwrap",
            "airlock.local.workdir", "none");

    @Test
    void underBubblewrapTheUrlIsTheCommandsOwnPort() throws Exception {
        Services.require(LocalBackend.findOnPath("bwrap").isPresent(), "bubblewrap is not installed (apt-get install bubblewrap)");
        Services.require(LocalBackend.findOnPath("busybox").isPresent(), "busybox is not installed (its httpd serves the port)");
        int port = freePort();
        try (Environment env = new LocalProvider().open(OpenContext.of(BWRAP))) {
            String dir = env.target().scratchDir() + "/www";
            env.files().mkdirs(dir);
            env.files().write(dir + "/hello.txt", "hello\0from the sandbox".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            env.start(ExecRequest.of("exec busybox httpd -f -p 127.0.0.1:" + port + " -h " + dir));
            URI url = env.ports().expose(port);
            assertEquals(URI.create("http://127.0.0.1:" + port + "/"), url);
            assertEquals("hello\0from the sandbox", new String(Http.fetch(url.resolve("/hello.txt"), Duration.ofSeconds(10)), java.nio.charset.StandardCharsets.UTF_8));
        }
    }

    @Test
    void withTheNetworkOffAPortIsRefusedInOneLine() {
        Services.require(LocalBackend.findOnPath("bwrap").isPresent(), "bubblewrap is not installed (apt-get install bubblewrap)");
        try (Environment env = new LocalProvider().open(OpenContext.of(BWRAP.with("airlock.network", "off")))) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> env.ports().expose(3000));
            assertEquals("port 3000 of the local sandbox cannot be reached: with airlock.network=off its commands have a"
                    + " network of their own that Airlock does not forward into; open it with airlock.network=on to expose"
                    + " ports", e.getMessage());
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

}
