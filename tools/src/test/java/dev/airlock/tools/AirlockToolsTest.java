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
    /** The working directory: under bubblewrap (the local default) the host dir commands and the test share. */
    @TempDir
    static Path work;

    @BeforeAll
    static void open() throws Exception {
        Files.createDirectories(Path.of(System.getenv("HOME")));
        env = Environments.open(Settings.of("airlock.container", "no", "airlock.local.workdir", work.toString()));
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
    void aCallCancelledBeforeItStartsNeverRuns() throws Exception {
        ToolCall call = ToolCall.unobserved();
        call.cancel();
        Path mark = Files.createTempDirectory(work, "cancel-").resolve("ran"); // where a command that ran would leave it

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
    void filesRoundTripAndLimitsAreToolErrors() throws Exception {
        Path dir = Files.createTempDirectory(work, "files-");
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

    @Test
    void longOutputKeepsItsHeadAndTheRestIsReadFromTheSavedFile() {
        Map<String, Object> r = ok(tools.call("exec", Map.of("command", "head -c 5000 /dev/zero | tr '\\0' a; echo e >&2",
                "max_output_bytes", 1000), ToolCall.unobserved()));

        assertEquals("a".repeat(1000), r.get("stdout"));
        assertEquals(4000L, r.get("stdout_dropped"));
        assertEquals("e\n", r.get("stderr"));
        assertEquals(0L, r.get("stderr_dropped"));
        assertFalse(r.containsKey("stderr_file"));
        String file = (String) r.get("stdout_file");
        assertTrue(file.startsWith(env.target().scratchDir() + "/" + AirlockTools.OUTPUT_DIR + "/"), file);
        assertTrue(((String) r.get("note")).contains("\"offset\": 1000"), () -> (String) r.get("note"));
        assertTrue(((String) r.get("note")).contains("pieces of up to 768 bytes"), () -> (String) r.get("note"));
        StringBuilder all = new StringBuilder((String) r.get("stdout"));
        while (all.length() < 5000) {
            Map<String, Object> rest = ok(tools.call("read_file", Map.of("path", file, "offset", all.length(), "length", 768),
                    ToolCall.unobserved()));
            assertEquals(5000L, rest.get("size"));
            assertEquals((long) all.length(), rest.get("offset"));
            all.append((String) rest.get("content"));
        }
        assertEquals("a".repeat(5000), all.toString());
        Map<String, Object> piece = ok(tools.call("read_file", Map.of("path", file, "offset", 4990, "length", 100), ToolCall.unobserved()));
        assertEquals("a".repeat(10), piece.get("content"));
    }

    @Test
    void outOfRangeLimitsAreOneLineErrorsNamingTheField() {
        ToolResult tooBig = tools.call("exec", Map.of("command", "true", "max_output_bytes", 4 * 1024 * 1024), ToolCall.unobserved());
        assertEquals("invalid argument 'max_output_bytes': must be a whole number from 1 to 3145728, got 4194304", tooBig.error());
        ToolResult past = tools.call("read_file", Map.of("path", "/etc/hostname", "offset", 1L << 40), ToolCall.unobserved());
        assertTrue(past.isError() && past.error().startsWith("bad offset: "), past::toString);
        ToolResult half = tools.call("read_file", Map.of("path", "/etc/hostname", "length", 0.5), ToolCall.unobserved());
        assertTrue(half.isError() && half.error().contains("'length'"), half::toString);
    }
}
