package dev.airlock.cli;

import io.modelcontextprotocol.json.McpJsonDefaults;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A message over the size limit gets an error answer (when its id can be found), never silence, and reading goes on. */
class McpStdioTransportTest {

    @Test
    void anOversizedRequestIsAnsweredWithAnErrorAndReadingGoesOn() throws Exception {
        String big = "x".repeat(5000);
        String input = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\",\"arguments\":{\"id\":1,\"content\":\"" + big + "\"}}}\n"
                // The TypeScript SDK puts the id last.
                + "{\"method\":\"tools/call\",\"params\":{\"arguments\":{\"content\":\"" + big + "\",\"id\":\"inner\"}},\"jsonrpc\":\"2.0\",\"id\":\"req-\\\"12\"}\n"
                // No id to be found: skipped with a warning only.
                + "{\"method\":\"x\",\"params\":\"" + big + "\"}\n"
                + "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":\"" + big + "\"}";
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<Object> answered = new ArrayList<>();
        McpStdioTransport t = new McpStdioTransport(McpJsonDefaults.getMapper(),
                new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), out, id -> { }, answered::add, 1000);

        t.run();

        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(3, lines.size(), lines::toString);
        assertTrue(lines.get(0).startsWith("{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32600,\"message\":\"message too large: over 1000 bytes"), lines.get(0));
        assertTrue(lines.get(1).contains("\"id\":\"req-\\\"12\""), lines.get(1));
        assertTrue(lines.get(2).contains("\"id\":8,"), lines.get(2));
        assertEquals(List.of(7, "req-\"12", 8), answered);
    }
}
