package dev.airlock.cli;

import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ./airlock emulator NAME --listen HOST:PORT}: the first line, serving until killed, nothing left after. */
class EmulatorIT {
    @Test
    void listensUntilKilledAndLeavesNoSandboxProcess() throws Exception {
        Process p = new ProcessBuilder(List.of(Airlock.SCRIPT.toString(), "emulator", "reference", "--listen", "127.0.0.1:0"))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            String first = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
            assertTrue(first != null && first.matches("listening on http://127\\.0\\.0\\.1:\\d+"), String.valueOf(first));
            URI base = URI.create(first.substring("listening on ".length()));
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> created = http.send(HttpRequest.newBuilder(base.resolve("/sandboxes?image=never/pulled:1"))
                    .header("Authorization", "Bearer any").POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(201, created.statusCode(), created.body());
            assertTrue(created.body().contains("never/pulled:1"), created.body());
            String id = created.body().replaceAll(".*\"id\":\"([^\"]+)\".*", "$1");
            HttpResponse<String> ran = http.send(HttpRequest.newBuilder(base.resolve("/sandboxes/" + id + "/exec"))
                    .header("Authorization", "Bearer any").header("X-Exec-Id", "e-1")
                    .POST(HttpRequest.BodyPublishers.ofString("setsid sleep 4646.5 >/dev/null 2>&1 & echo started")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertTrue(ran.body().contains("started"), ran.body());
            Processes.awaitRunning(1, "sleep", "4646.5");
            assertTrue(p.isAlive(), "serves until killed");
            p.destroy(); // SIGTERM
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "a hang guard, not a timing assertion");
            Processes.assertNoneRunning("sleep", "4646.5");
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void anUnknownEmulatorOrAnOpenAddressIsAUsageError() {
        Airlock.Result r = Airlock.airlock("emulator", "nope").run();
        assertEquals(2, r.exit());
        // issue 16 (and the other cloud backends) add emulators to the list: check the line's shape and one name.
        assertTrue(r.err().startsWith("airlock: usage: no emulator named nope; available: ") && r.err().contains("reference")
                && r.err().endsWith("\n") && r.err().lines().count() == 1, r.err());
        Airlock.Result open = Airlock.airlock("emulator", "reference", "--listen", "0.0.0.0:0").run();
        assertEquals(2, open.exit());
        assertTrue(open.err().contains("loopback only"), open.err());
    }
}
