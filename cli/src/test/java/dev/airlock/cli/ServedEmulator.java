package dev.airlock.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./airlock emulator NAME --listen 127.0.0.1:0} for a CLI test: started, its first stdout
 * line checked against the contract ({@code listening on URL}), and stopped (bounded) on close.
 */
final class ServedEmulator implements AutoCloseable {
    private final Process process;
    final String url;

    private ServedEmulator(Process process, String url) {
        this.process = process;
        this.url = url;
    }

    /**
     * Starts the emulator with {@code credentials} (the service's own variables, e.g.
     * {@code DAYTONA_API_KEY}) in its environment, the only ones it then accepts; {@code urlPattern}
     * is the regex its URL must match.
     */
    static ServedEmulator start(String name, String urlPattern, Map<String, String> credentials) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(List.of(Airlock.SCRIPT.toString(), "emulator", name, "--listen", "127.0.0.1:0"))
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().keySet().removeIf(k -> k.startsWith("MODAL_") || k.startsWith("DAYTONA_") || k.startsWith("VERCEL_"));
        pb.environment().putAll(credentials);
        Process p = pb.start();
        String first = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertTrue(first != null && first.matches("listening on " + urlPattern), String.valueOf(first));
        return new ServedEmulator(p, first.substring("listening on ".length()));
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
