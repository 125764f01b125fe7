package dev.airlock.tools;

import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shared tools on the local backend: encodings, cancel, progress and limits, as a door sees them. */
class AirlockToolsTest {
    private static Environment env;
    private static AirlockTools tools;

    @BeforeAll
    static void open() throws Exception {
        Files.createDirectories(Path.of(System.getenv("HOME")));
        env = Environments.open(Settings.of("airlock.container", "no"));
        tools = new AirlockTools(() -> env, 1024);
    }

    @AfterAll
    static void close() {
        env.close();
    }

    private static Map<String, Object> ok(ToolResult r) {
        assertFalse(r.isError(), r::error);
        return r.structured();
    }

    @Test
    void outputIsTextWhenValidUtf8AndBase64Otherwise() {
        Map<String, Object> r = ok(tools.call("exec", Map.of("command", "printf 'h\\303\\251\\001\"'; printf '\\377\\000' >&2"),
                ToolCall.unobserved()));

        assertEquals("hé\u0001\"", r.get("stdout"));
        assertFalse(r.containsKey("stdout_base64"));
        assertArrayEquals(new byte[] {(byte) 0xff, 0}, Base64.getDecoder().decode((String) r.get("stderr_base64")));
        assertFalse(r.containsKey("stderr"));
        assertEquals("{\"exit_code\":0,\"stdout\":\"hé\\u0001\\\"\",\"stderr_base64\":\"/wA=\",\"stdout_dropped\":0,"
                + "\"stderr_dropped\":0,\"timed_out\":false,\"cancelled\":false}", ToolResult.ok(r).text());
    }

    @Test
    void aCallCancelledBeforeItStartsNeverRuns(@TempDir Path dir) {
        ToolCall call = ToolCall.unobserved();
        call.cancel();
        Path mark = dir.resolve("ran");

        ToolResult r = tools.call("exec", Map.of("command", "touch '" + mark + "'"), call);

        assertTrue(r.isError());
        assertFalse(Files.exists(mark), "the command did not run");
    }

    @Test
    void aRunningExecReportsProgressAndACancelKillsIt() throws Exception {
        List<String> progress = new ArrayList<>();
        ToolCall call = ToolCall.withProgress((elapsed, message) -> {
            synchronized (progress) {
                progress.add(message);
            }
        }, Duration.ofMillis(100));
        CompletableFuture<ToolResult> running = CompletableFuture.supplyAsync(
                () -> tools.call("exec", Map.of("command", "sleep 600"), call));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            synchronized (progress) {
                if (!progress.isEmpty()) {
                    break;
                }
            }
            assertTrue(System.nanoTime() < until, "no progress report");
            Thread.sleep(20);
        }

        call.cancel();
        Map<String, Object> r = ok(running.get(60, TimeUnit.SECONDS));

        assertEquals(true, r.get("cancelled"));
        assertEquals(130, r.get("exit_code"));
        assertTrue(progress.get(0).startsWith("running for "), progress::toString);
    }

    @Test
    void filesRoundTripAndLimitsAreToolErrors(@TempDir Path dir) throws Exception {
        byte[] bytes = {0, (byte) 0xc3, 0x28, 10};
        String file = dir.resolve("a/b.bin").toString();
        ok(tools.call("write_file", Map.of("path", file, "content_base64", Base64.getMimeEncoder().encodeToString(bytes) + "\n"),
                ToolCall.unobserved()));
        Map<String, Object> read = ok(tools.call("read_file", Map.of("path", file), ToolCall.unobserved()));
        assertArrayEquals(bytes, Base64.getDecoder().decode((String) read.get("content_base64")));
        assertEquals(4L, read.get("size"));

        // Written through the tools: the environment's /tmp need not be the test's.
        ok(tools.call("write_file", Map.of("path", dir.resolve("big").toString(),
                "content_base64", Base64.getEncoder().encodeToString(new byte[1025])), ToolCall.unobserved()));
        ToolResult big = tools.call("read_file", Map.of("path", dir.resolve("big").toString()), ToolCall.unobserved());
        assertTrue(big.isError() && big.error().contains("1024 bytes"), big::toString);
        ToolResult missing = tools.call("read_file", Map.of("path", dir.resolve("nope").toString()), ToolCall.unobserved());
        assertTrue(missing.isError() && missing.error().startsWith("not found: "), missing::toString);

        ToolResult nonEmpty = tools.call("delete", Map.of("path", dir.resolve("a").toString()), ToolCall.unobserved());
        assertTrue(nonEmpty.isError() && nonEmpty.error().contains("recursive"), nonEmpty::toString);
        assertTrue(Files.exists(dir.resolve("a/b.bin")));
        assertEquals(true, ok(tools.call("delete", Map.of("path", dir.resolve("a").toString(), "recursive", true),
                ToolCall.unobserved())).get("deleted"));
        assertFalse(Files.exists(dir.resolve("a")));
    }

    @Test
    void badArgumentsNameTheField() {
        assertError("write_file", Map.of("path", "/tmp/x", "content", "a", "mode", "999"), "'mode'");
        assertError("exec", Map.of("command", "true", "env", Map.of("1X", "v")), "'env'");
        assertError("exec", Map.of("command", "cat", "stdin", "a", "stdin_base64", "YQ=="), "'stdin_base64'");
        assertError("exec", Map.of("cwd", "/"), "'command'");
        assertError("exec", Map.of("command", "true", "timeout_seconds", "5"), "'timeout_seconds'");
        assertError("stat", Map.of(), "'path'");
        assertError("nope", Map.of(), "unknown tool");
    }

    private static void assertError(String tool, Map<String, Object> args, String mention) {
        ToolResult r = tools.call(tool, args, ToolCall.unobserved());
        assertTrue(r.isError() && r.error().contains(mention), () -> tool + " " + args + " -> " + r);
    }
}
