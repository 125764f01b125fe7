package dev.airlock.modal;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.ExecRequest;
import dev.airlock.Payload;
import dev.airlock.Ports;
import dev.airlock.modal.emulator.ModalEmulator;
import dev.airlock.settings.Settings;
import dev.airlock.spi.OpenContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Modal's tunnels and snapshots where they go wrong, against the emulator over the real wire. */
class ModalPortsAndSnapshotsTest {
    @RegisterExtension
    static final ModalFixture EMULATOR = new ModalFixture();

    private static Environment open(Settings s) {
        return new ModalProvider().open(OpenContext.of(s));
    }

    private static int live() {
        return ((ModalEmulator) EMULATOR.served.emulator()).liveSandboxes();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void assertOneLine(String message, String... words) {
        assertFalse(message.contains("\n"), "one line: " + message);
        for (String w : words) {
            assertTrue(message.contains(w), "the message must name " + w + ": " + message);
        }
    }

    /** {@code airlock up --port P}: the sandbox is made with P's tunnel; an environment attached to it reaches P, and no other port. */
    @Test
    void anUpSandboxsDeclaredPortAnswersThroughAnAttachedEnvironmentAndNoOtherPortIsExposed() throws Exception {
        int port = freePort();
        int other = port == 65535 ? 1024 : port + 1;
        Settings settings = EMULATOR.settings().with(Ports.KEY, String.valueOf(port));
        String id = new ModalProvider().up(settings, Duration.ofMinutes(5));
        try (Environment env = open(EMULATOR.settings().with(ModalSettings.SANDBOX_ID, id))) {
            byte[] served = "served through the tunnel\r\n\0end".getBytes(StandardCharsets.ISO_8859_1);
            String dir = env.target().passwdHome() + "/ports-" + port;
            env.files().mkdirs(dir);
            env.files().write(dir + "/x.bin", Payload.of(served));
            env.start(ExecRequest.of("exec busybox httpd -f -p " + port + " -h " + dir));
            URI url = env.ports().expose(port);
            assertEquals("http", url.getScheme(), url.toString());
            assertArrayEquals(served, fetch(url.resolve("/x.bin")));
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> env.ports().expose(other));
            assertOneLine(e.getMessage(), "port " + other, "it has " + port, Ports.KEY + "=" + other, "airlock up --port");
        } finally {
            new ModalProvider().down(EMULATOR.settings(), id);
        }
    }

    /** A server in the sandbox may take a moment to listen: asked again until it answers, for at most 20 s. */
    private static byte[] fetch(URI url) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            HttpURLConnection c = (HttpURLConnection) url.toURL().openConnection();
            c.setConnectTimeout(5000);
            c.setReadTimeout(10_000);
            try (InputStream in = c.getInputStream()) {
                return in.readAllBytes();
            } catch (IOException e) {
                if (System.nanoTime() > end) {
                    throw e;
                }
                Thread.sleep(200);
            } finally {
                c.disconnect();
            }
        }
    }

    /** The V1 family: tunnels through SandboxGetTunnels, the snapshot through the same router call, the new sandbox V1 too. */
    @Test
    void theV1FamilyExposesADeclaredPortAndOpensFromItsSnapshot() throws Exception {
        int port = freePort();
        Settings v1 = EMULATOR.settings().with(ModalSettings.FAMILY, "v1");
        byte[] served = "v1 tunnel\0bytes".getBytes(StandardCharsets.ISO_8859_1);
        String snapshot;
        try (Environment env = open(v1.with(Ports.KEY, String.valueOf(port)))) {
            assertFalse(ModalSandbox.isV2(ModalBackend.of(env).sandboxId()), "a V1 sandbox");
            String dir = env.target().passwdHome() + "/v1-" + port;
            env.files().mkdirs(dir);
            env.files().write(dir + "/x.bin", Payload.of(served));
            env.start(ExecRequest.of("exec busybox httpd -f -p " + port + " -h " + dir));
            assertArrayEquals(served, fetch(env.ports().expose(port).resolve("/x.bin")));
            snapshot = env.snapshot();
        }
        try (Environment from = open(v1.with(ModalSettings.SNAPSHOT, snapshot))) {
            String dir = from.target().passwdHome() + "/v1-" + port;
            try (InputStream in = from.files().read(dir + "/x.bin")) {
                assertArrayEquals(served, in.readAllBytes());
            }
        }
    }

    @Test
    void anUnknownSnapshotIsOneLineAndLeavesNoSandbox() {
        int before = live();
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> open(EMULATOR.settings().with(ModalSettings.SNAPSHOT, "im-NoSuchSnapshot0000000000")).close());
        assertOneLine(e.getMessage(), "im-NoSuchSnapshot0000000000", ModalSettings.SNAPSHOT, "airlock snapshot");
        assertEquals(before, live(), "no sandbox is made for a snapshot Modal does not have");
    }

    /** A snapshot deleted (ImageDelete) is gone from the service: opening from it is the same one line. */
    @Test
    void aDeletedSnapshotCannotBeOpened() {
        String id;
        try (Environment env = open(EMULATOR.settings())) {
            id = env.snapshot();
        }
        try (ModalClient c = ModalProvider.client(EMULATOR.settings())) {
            c.authenticate();
            assertTrue(ModalSnapshots.delete(c, id), "the snapshot's image was there to delete");
            assertFalse(ModalSnapshots.delete(c, id), "deleted twice");
        }
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> open(EMULATOR.settings().with(ModalSettings.SNAPSHOT, id)).close());
        assertOneLine(e.getMessage(), id, ModalSettings.SNAPSHOT);
    }

    @Test
    void aSnapshotAndASandboxIdTogetherAreOneLine() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> ModalSettings.from(EMULATOR.settings()
                .with(Map.of(ModalSettings.SNAPSHOT, "im-x", ModalSettings.SANDBOX_ID, "sb-y")), Map.of()));
        assertOneLine(e.getMessage(), ModalSettings.SNAPSHOT, ModalSettings.SANDBOX_ID);
    }

    @Test
    void portsWithTheNetworkOffAreOneLine() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> ModalSettings.from(EMULATOR.settings()
                .with(Map.of(Ports.KEY, "3000", "airlock.network", "off")), Map.of()));
        assertOneLine(e.getMessage(), Ports.KEY, "airlock.network=off");
    }
}
