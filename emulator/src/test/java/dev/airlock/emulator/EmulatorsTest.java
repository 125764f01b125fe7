package dev.airlock.emulator;

import dev.airlock.ConfigurationException;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EmulatorsTest {
    @Test
    void serveAnnouncesItsUrlFirstAndRunsUntilStopped(@TempDir Path dir) throws Exception {
        PipedInputStream pipe = new PipedInputStream();
        PrintStream out = new PrintStream(new PipedOutputStream(pipe), false, StandardCharsets.UTF_8);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Path state = dir.resolve("state");
        Thread t = new Thread(() -> {
            try {
                Emulators.serve("reference", "127.0.0.1:0", Settings.of("airlock.emulator.state-dir", state.toString()),
                        getClass().getClassLoader(), out, new PrintStream(err, true, StandardCharsets.UTF_8));
            } catch (Throwable e) {
                failed.set(e);
            }
        });
        t.start();
        String first = new BufferedReader(new InputStreamReader(pipe, StandardCharsets.UTF_8)).readLine();
        assertTrue(first.matches("listening on http://127\\.0\\.0\\.1:\\d+"), first);
        URI base = URI.create(first.substring("listening on ".length()));
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> created = http.send(HttpRequest.newBuilder(base.resolve("/sandboxes"))
                .header("Authorization", "Bearer x").POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(201, created.statusCode(), created.body());
        assertTrue(Files.isDirectory(state.resolve("sb-1")));
        assertTrue(t.isAlive(), "runs until killed");
        t.interrupt();
        t.join();
        assertEquals(null, failed.get());
        assertFalse(Files.exists(state.resolve("sb-1")), "stopping the emulator removes its sandboxes");
    }

    @Test
    void namesAndAddressesAreCheckedInOneLine() {
        ClassLoader cl = getClass().getClassLoader();
        ConfigurationException none = assertThrows(ConfigurationException.class, () -> Emulators.find("modal", cl));
        assertEquals("no emulator named modal; available: reference", none.getMessage());
        assertTrue(assertThrows(ConfigurationException.class, () -> Emulators.parseListen("0.0.0.0:8080"))
                .getMessage().contains("loopback only"));
        assertThrows(ConfigurationException.class, () -> Emulators.parseListen("8080"));
        assertThrows(ConfigurationException.class, () -> Emulators.parseListen("127.0.0.1:99999"));
        assertEquals(8080, Emulators.parseListen("[::1]:8080").getPort());
        assertTrue(Emulators.parseListen("localhost:0").getAddress().isLoopbackAddress());
    }
}
