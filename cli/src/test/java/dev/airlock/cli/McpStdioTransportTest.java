package dev.airlock.cli;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
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

    /**
     * Large messages are handled within a byte budget: with room for one, the second large
     * request is not even read (let alone parsed) until the first is answered.
     */
    @Test
    void aSecondLargeRequestIsNotParsedUntilTheFirstIsAnswered() throws Exception {
        String big = "x".repeat(McpStdioTransport.LARGE_MESSAGE_BYTES);
        String input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" + big + "\"}}\n"
                + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"pad\":\"" + big + "\"}}\n";
        java.io.PipedOutputStream client = new java.io.PipedOutputStream();
        java.io.PipedInputStream server = new java.io.PipedInputStream(client, 1 << 16);
        java.util.concurrent.CopyOnWriteArrayList<Object> answered = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CopyOnWriteArrayList<Object> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
        McpStdioTransport t = new McpStdioTransport(McpJsonDefaults.getMapper(), server, new ByteArrayOutputStream(),
                id -> { }, answered::add, big.length() + 100, big.length() + 100);
        t.setSessionFactory(transport -> new FakeSession(handled, release));
        Thread reader = new Thread(() -> {
            try {
                t.run();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        reader.start();
        Thread writer = new Thread(() -> {
            try {
                client.write(input.getBytes(StandardCharsets.UTF_8));
                client.close();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        writer.start();
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
        while (handled.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        Thread.sleep(300); // give a wrong implementation time to dispatch the second one
        assertEquals(List.of(1), handled, "only the first large request is in hand while it is handled");
        release.countDown();
        reader.join(20_000);
        assertEquals(List.of(1, 2), handled);
    }

    /** A session that records each request's id and completes its handling only when released. */
    private static final class FakeSession extends io.modelcontextprotocol.spec.McpServerSession {
        private final List<Object> handled;
        private final java.util.concurrent.CountDownLatch release;

        FakeSession(List<Object> handled, java.util.concurrent.CountDownLatch release) {
            super("test", java.time.Duration.ofSeconds(5), null, null, java.util.Map.of(), java.util.Map.of());
            this.handled = handled;
            this.release = release;
        }

        @Override
        public reactor.core.publisher.Mono<Void> handle(io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage message) {
            handled.add(((io.modelcontextprotocol.spec.McpSchema.JSONRPCRequest) message).id());
            return reactor.core.publisher.Mono.<Void>fromRunnable(() -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }).subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic());
        }
    }

    /** Issue 34: the SDK's "Unknown tool: invalid_tool_name" becomes a message naming the tool; other errors pass as they are. */
    @Test
    void anUnknownToolIsNamedInTheMessage() {
        McpSchema.JSONRPCResponse sdk = McpSchema.JSONRPCResponse.error(3, new McpSchema.JSONRPCResponse.JSONRPCError(
                McpSchema.ErrorCodes.INVALID_PARAMS, "Unknown tool: invalid_tool_name", "Tool not found: run\n"));

        McpSchema.JSONRPCResponse named = McpStdioTransport.namingTheTool(sdk, "run\n");

        assertEquals("unknown tool 'run?': this server has no tool by that name (tools/list names them)", named.error().message());
        assertEquals(McpSchema.ErrorCodes.INVALID_PARAMS, named.error().code());
        assertEquals("Tool not found: run\n", named.error().data(), "data is kept");
        assertEquals(3, named.id());
        McpSchema.JSONRPCResponse other = McpSchema.JSONRPCResponse.error(4, new McpSchema.JSONRPCResponse.JSONRPCError(
                McpSchema.ErrorCodes.INVALID_PARAMS, "Invalid arguments"));
        assertSame(other, McpStdioTransport.namingTheTool(other, "exec"));
        assertSame(sdk, McpStdioTransport.namingTheTool(sdk, null), "no tools/call on record: as it was");
    }
}
