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

    /**
     * Without {@code DAYTONA_API_KEY} in its environment the emulator makes a key and prints it on
     * the line after the URL; only that key gets in, any other is refused 401 as the service does.
     */
    @Test
    void anEmulatorMakesAndPrintsItsOwnKeyAndRefusesAnyOther() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(List.of(Airlock.SCRIPT.toString(), "emulator", "daytona", "--listen", "127.0.0.1:0"))
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().keySet().removeIf(k -> k.startsWith("DAYTONA_"));
        Process p = pb.start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String first = out.readLine();
            assertTrue(first != null && first.matches("listening on http://127\\.0\\.0\\.1:\\d+/api"), String.valueOf(first));
            String second = out.readLine();
            assertTrue(second != null && second.matches("credential DAYTONA_API_KEY=dtn_[A-Za-z0-9]{24}"), String.valueOf(second));
            String key = second.substring("credential DAYTONA_API_KEY=".length());
            String base = first.substring("listening on ".length());
            assertEquals(200, list(base, key).statusCode());
            HttpResponse<String> refused = list(base, "dtn_not-the-emulators-key");
            assertEquals(401, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("\"statusCode\":401") && refused.body().contains("\"message\":\"Unauthorized\"")
                    && !refused.body().contains("not-the-emulators-key"), refused.body());
        } finally {
            p.destroy();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    /** With {@code DAYTONA_API_KEY} set, the emulator accepts that key and never prints its value. */
    @Test
    void anEmulatorTakesTheKeyFromItsEnvironmentAndNeverPrintsIt() throws Exception {
        String key = "cli-emulator-env-key-7f3a9c";
        // Both streams to a file, read whole after exit (a pipe read across the exit can fail with "Stream closed").
        java.nio.file.Path log = java.nio.file.Files.createTempFile("airlock-emulator-", ".log");
        ProcessBuilder pb = new ProcessBuilder(List.of(Airlock.SCRIPT.toString(), "emulator", "daytona", "--listen", "127.0.0.1:0"))
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("DAYTONA_API_KEY", key);
        Process p = pb.start();
        try {
            String base = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60); // a hang guard, not a timing assertion
            while (System.nanoTime() < deadline && p.isAlive()) {
                List<String> lines = java.nio.file.Files.readAllLines(log, StandardCharsets.UTF_8);
                if (lines.stream().anyMatch(l -> l.startsWith("credential "))) {
                    base = lines.stream().filter(l -> l.startsWith("listening on ")).findFirst()
                            .map(l -> l.substring("listening on ".length())).orElse(null);
                    assertTrue(lines.contains("credential DAYTONA_API_KEY from the environment"), String.join("\n", lines));
                    break;
                }
                Thread.sleep(50);
            }
            assertTrue(base != null, java.nio.file.Files.readString(log));
            assertEquals(200, list(base, key).statusCode());
            assertEquals(401, list(base, "dtn_other").statusCode());
            p.destroy();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "a hang guard, not a timing assertion");
            String seen = java.nio.file.Files.readString(log);
            assertTrue(!seen.contains(key), "the key from the environment was printed:\n" + seen);
        } finally {
            p.destroyForcibly();
            java.nio.file.Files.deleteIfExists(log);
        }
    }

    private static HttpResponse<String> list(String base, String key) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + "/sandbox"))
                .header("Authorization", "Bearer " + key).GET().build(), HttpResponse.BodyHandlers.ofString());
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
