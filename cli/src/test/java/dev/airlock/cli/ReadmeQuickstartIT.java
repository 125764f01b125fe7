package dev.airlock.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's CLI and MCP quickstarts, run as written: the CLI block by bash in a fresh directory
 * whose {@code ./airlock} is this checkout's, the MCP block's server command started as a client
 * would start it from that configuration, then spoken to over stdio.
 */
class ReadmeQuickstartIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The first {@code ```LANG} block after the quickstart heading {@code ### TITLE}. */
    static String block(String title, String lang) throws IOException {
        String readme = Files.readString(Airlock.ROOT.resolve("README.md"));
        int at = readme.indexOf("\n### " + title + "\n");
        assertTrue(at >= 0, "the README's quickstart " + title);
        Matcher m = Pattern.compile("```" + lang + "\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertTrue(m.find(at), "a ```" + lang + " block in the " + title + " quickstart");
        return m.group(1);
    }

    @Test
    void theCliQuickstartRunsAsWritten() throws Exception {
        String script = block("CLI", "sh");
        Path dir = Files.createTempDirectory(Airlock.workRoot(), "quickstart-");
        Files.createSymbolicLink(dir.resolve("airlock"), Airlock.SCRIPT);
        ProcessBuilder pb = Airlock.raw().builder();
        pb.command("bash", "-euo", "pipefail", "-c", script).directory(dir.toFile());
        pb.environment().put("AIRLOCK_HOME", Airlock.stateDir().toString());
        pb.environment().put("AIRLOCK_CONTAINER", "no"); // this VM has /.dockerenv; count it as a host

        Airlock.Result r = run(pb);

        assertEquals(0, r.exit(), r::toString);
        String host = new String(new ProcessBuilder("uname", "-n").start().getInputStream().readAllBytes(),
                StandardCharsets.UTF_8).strip();
        List<String> out = r.out().lines().toList();
        assertEquals("hello from " + host, out.get(0), r::toString);
        assertEquals("7", out.get(1).strip(), r::toString);
        assertEquals(List.of("o", "n", "e", "\\0", "t", "w", "o"), List.of(out.get(2).strip().split("\\s+")), r::toString);
        assertEquals("exit 124", out.get(3), r::toString);
        assertTrue(out.stream().anyMatch(l -> l.matches("\\* local\\s+available.*")), r::toString);
        assertEquals("one\0two", Files.readString(dir.resolve("notes/data.bin")), "the file the quickstart wrote");
    }

    @Test
    void theMcpQuickstartsConfigurationStartsAServerThatRunsACommand() throws Exception {
        JsonNode server = JSON.readTree(block("MCP", "json")).path("mcpServers").path("airlock");
        assertEquals("/path/to/airlock/airlock", server.path("command").asText(), "the placeholder a reader replaces");
        List<String> command = new ArrayList<>(List.of(Airlock.SCRIPT.toString()));
        server.path("args").forEach(a -> command.add(a.asText()));
        ProcessBuilder pb = Airlock.raw().builder();
        pb.command(command);
        server.path("env").fields().forEachRemaining(e -> pb.environment().put(e.getKey(), e.getValue().asText()));
        if (!isOnPath("bwrap")) {
            pb.environment().put("AIRLOCK_LOCAL_ISOLATION", "none"); // the README's bwrap needs bubblewrap
        }
        pb.environment().put("AIRLOCK_HOME", Airlock.stateDir().toString());
        pb.environment().put("AIRLOCK_CONTAINER", "no");
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        try (OutputStream in = p.getOutputStream();
             BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            send(in, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                    + "\"capabilities\":{},\"clientInfo\":{\"name\":\"readme\",\"version\":\"1\"}}}");
            assertEquals("airlock", reply(out, 1).path("result").path("serverInfo").path("name").asText());
            send(in, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            send(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"exec\","
                    + "\"arguments\":{\"command\":\"echo hello from mcp\"}}}");
            JsonNode result = reply(out, 2).path("result");
            assertEquals(0, result.path("structuredContent").path("exit_code").asInt(-1), result::toString);
            assertEquals("hello from mcp\n", result.path("structuredContent").path("stdout").asText(), result::toString);
        } finally {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
        assertEquals(0, p.exitValue(), "the server ends when its client goes away");
    }

    private static void send(OutputStream in, String message) throws IOException {
        in.write((message + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    private static JsonNode reply(BufferedReader out, int id) throws Exception {
        CompletableFuture<JsonNode> next = CompletableFuture.supplyAsync(() -> {
            try {
                for (String line; (line = out.readLine()) != null; ) {
                    JsonNode n = JSON.readTree(line);
                    if (n.path("id").asInt(-1) == id) {
                        return n;
                    }
                }
                throw new AssertionError("the server ended before answering request " + id);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        return next.get(180, TimeUnit.SECONDS);
    }

    private static Airlock.Result run(ProcessBuilder pb) throws IOException {
        Process p = pb.start();
        p.getOutputStream().close();
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> Airlock.readAll(p.getInputStream()));
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> Airlock.readAll(p.getErrorStream()));
        return Airlock.finish(p, out, err, CompletableFuture.completedFuture(null));
    }

    private static boolean isOnPath(String program) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }
}
