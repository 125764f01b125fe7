package dev.airlock.cli;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.airlock.cli.Airlock.airlock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@code airlock mcp} driven over stdio by a client that is not ours: the official MCP TypeScript
 * SDK ({@code src/test/mcp-client}, pinned in its package-lock.json; {@code npm ci} there installs
 * it). The client's own steps assert bytes, messages and processes; this test runs it with a
 * throwaway HOME and checks every step passed. Skips (saying why) without node or node_modules;
 * fails instead under {@code AIRLOCK_REQUIRE_SERVICES=1}.
 */
class McpIT {
    private static final Path CLIENT_DIR = Airlock.ROOT.resolve("cli/src/test/mcp-client");
    private static final Path TEST_ROOT = Path.of(System.getProperty("airlock.test.root",
            "/var/tmp/airlock-tests-" + System.getProperty("user.name") + "/cli-ide"));
    private static final long HANG_GUARD_SECONDS = 300;

    @BeforeEach
    void needsNodeAndTheSdk() {
        String why = null;
        if (!CLIENT_DIR.resolve("node_modules/@modelcontextprotocol/sdk/package.json").toFile().isFile()) {
            why = "the MCP client's node_modules is missing; run 'npm ci' in cli/src/test/mcp-client";
        }
        try {
            Process p = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                why = "'node --version' failed";
            }
        } catch (IOException | InterruptedException e) {
            why = "node is not installed (Debian package nodejs)";
        }
        if (why != null) {
            if ("1".equals(System.getenv("AIRLOCK_REQUIRE_SERVICES"))) {
                fail("AIRLOCK_REQUIRE_SERVICES=1 but " + why + " (see .ci/run)");
            }
            System.out.println("McpIT skipped: " + why);
            Assumptions.abort(why);
        }
    }

    @Test
    void theOfficialClientUsesEveryToolBinaryStdinDenialAndCancellation(@TempDir Path work) throws Exception {
        Homes h = Homes.fresh("tools");
        String denied = h.home.resolve(".ssh/authorized_keys").toString();
        // The guard's message for this path, as the CLI prints it: the MCP door must say the same.
        Airlock.Result cli = h.apply(airlock("write", denied)).stdin(Airlock.bytes("x")).run();
        assertEquals(ExitCodes.DENIED, cli.exit(), cli::toString);
        String message = cli.err().strip().replaceFirst("^airlock: ", "");

        Result r = runClient("tools", h, work, Map.of("DENIED_PATH", denied, "DENIED_MESSAGE", message));

        assertEquals(0, r.exit, r::toString);
        for (String step : List.of("initialize", "list tools", "exec with 160 KiB binary stdin",
                "exec with cwd, env and text output", "exec timeout", "write_file and read_file round trip in base64",
                "bad input is a tool error naming the field", "denied write returns the guard message",
                "approval without elicitation fails closed", "cancel kills the process tree",
                "a client that goes away leaves no process behind")) {
            assertTrue(r.out.contains("ok: " + step + "\n"), () -> "step '" + step + "' did not pass: " + r);
        }
        Processes.assertNoneRunning("sleep", "4321.5");
        Processes.assertNoneRunning("sleep", "4321.7");
        assertTrue(!Files.exists(Path.of(denied)), "the denied file was not written");
    }

    @Test
    void aWriteThatNeedsApprovalIsAskedThroughElicitation(@TempDir Path work) throws Exception {
        Homes h = Homes.fresh("elicitation");

        Result r = runClient("elicitation", h, work, Map.of());

        assertEquals(0, r.exit, r::toString);
        assertTrue(r.out.contains("ok: approval through elicitation\n"), r::toString);
        assertEquals("Host e\n", Files.readString(h.home.resolve(".ssh/config")), "the approved writes landed");
    }

    /**
     * Issue 34: a 9 MiB exec (text on stdout, 5,000,000 binary bytes on stderr) and a 5,000,000-byte
     * binary read_file each get a capped, well-formed answer the official client accepts (its buffer
     * holds 10 MiB), the session answers the next call, and the rest is read back byte-exact.
     */
    @Test
    void largeOutputIsCappedAndTheRestCanBeRead(@TempDir Path work) throws Exception {
        Homes h = Homes.fresh("large");

        Result r = runClient("large", h, work, Map.of());

        assertEquals(0, r.exit, r::toString);
        for (String step : List.of("a 9 MiB exec gets a capped answer", "the session answers after a large exec",
                "the rest of the output is read back byte-exact",
                "escaping counts against the cap, and the cap has a ceiling",
                "a 5,000,000-byte binary read_file is refused in one line and read in pieces byte-exact")) {
            assertTrue(r.out.contains("ok: " + step + "\n"), () -> "step '" + step + "' did not pass: " + r);
        }
    }

    /**
     * Issue 34: exec state carries between calls of one connection (one shell session per
     * connection), not to another connection; a {@code session} argument names a separate session;
     * {@code --set airlock.session=NAME} is honoured and kept across connections and shared with
     * {@code airlock exec} of NAME; an unknown tool is named in the error message.
     */
    @Test
    void execStateCarriesWithinAConnectionAndANamedSessionAcrossThem(@TempDir Path work) throws Exception {
        Homes h = Homes.fresh("sessions");
        Airlock named = airlock("--set", "airlock.local.isolation=none", "--set", "airlock.session=agent1", "mcp");

        Result r = runClient("sessions", h, work, Map.of("AIRLOCK_MCP_NAMED_COMMAND", json(named.command())));

        assertEquals(0, r.exit, r::toString);
        for (String step : List.of("cd and export carry to the next exec of a connection",
                "two connections do not share a session", "a named session of a connection is apart from its main one",
                "two sessions of a connection run side by side",
                "an unknown tool is named in the error message", "airlock.session names a session kept across connections")) {
            assertTrue(r.out.contains("ok: " + step + "\n"), () -> "step '" + step + "' did not pass: " + r);
        }
        Airlock.Result cli = h.apply(airlock("--set", "airlock.local.isolation=none", "--set", "airlock.session=agent1",
                "exec", "-n", "--", "pwd; echo $AGENT")).run();
        assertEquals(work.toRealPath() + "\ntwo\n", cli.out(), cli::toString);
    }

    /**
     * Runs one scenario against {@code ./airlock mcp}. The guard scenarios write to a throwaway HOME
     * outside the working directory, which bubblewrap (the local default) keeps read-only and refuses
     * to bind writable, so they run the server without it; the guard does not depend on it.
     */
    private static Result runClient(String scenario, Homes h, Path work, Map<String, String> extra) throws Exception {
        Airlock server = scenario.equals("large") ? airlock("mcp") : airlock("--set", "airlock.local.isolation=none", "mcp");
        ProcessBuilder pb = new ProcessBuilder("node", "client.mjs", scenario).directory(CLIENT_DIR.toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("AIRLOCK_"));
        pb.environment().putAll(h.env());
        pb.environment().put("AIRLOCK_MCP_COMMAND", json(server.command()));
        pb.environment().put("AIRLOCK_MCP_WORK", work.toRealPath().toString());
        // The server starts where ./airlock runs in every IT: the one host dir bubblewrap lets it write.
        pb.environment().put("AIRLOCK_MCP_CWD", Airlock.workRoot().toString());
        pb.environment().put("APPROVAL_PATH", h.home.resolve(".ssh/config").toString());
        pb.environment().putAll(extra);
        Process p = pb.start();
        p.getOutputStream().close();
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> Airlock.readAll(p.getInputStream()));
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> Airlock.readAll(p.getErrorStream()));
        if (!p.waitFor(HANG_GUARD_SECONDS, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            fail("the MCP client did not finish within " + HANG_GUARD_SECONDS + "s (hang)");
        }
        return new Result(p.exitValue(), new String(out.get(30, TimeUnit.SECONDS), StandardCharsets.UTF_8),
                new String(err.get(30, TimeUnit.SECONDS), StandardCharsets.UTF_8));
    }

    /** A command line as a JSON array of strings. */
    private static String json(List<String> words) {
        StringBuilder command = new StringBuilder("[");
        for (String word : words) {
            command.append(command.length() > 1 ? "," : "").append('"').append(word.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
        }
        return command.append(']').toString();
    }

    private record Result(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- client stdout:\n" + out + "--- client and server stderr:\n" + err;
        }
    }

    /** A throwaway HOME, real home and AIRLOCK_HOME for the server, so the guard's tests touch nothing real. */
    private record Homes(Path home, Path realHome, Path airlockHome) {
        static Homes fresh(String name) throws IOException {
            Path root = TEST_ROOT.resolve("mcp-" + name);
            if (Files.exists(root)) {
                try (var walk = Files.walk(root)) {
                    walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
            Homes h = new Homes(root.resolve("home"), root.resolve("real-home"), root.resolve("airlock-home"));
            Files.createDirectories(h.home);
            Files.createDirectories(h.realHome);
            Files.createDirectories(h.airlockHome);
            return h;
        }

        Map<String, String> env() {
            return Map.of("HOME", home.toString(), "AIRLOCK_REAL_HOME", realHome.toString(),
                    "AIRLOCK_HOME", airlockHome.toString());
        }

        Airlock apply(Airlock a) {
            env().forEach(a::env);
            return a;
        }
    }
}
