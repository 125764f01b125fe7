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
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The exec tool's shell sessions on the local backend: what carries over, to whom, and the session argument. */
class ExecSessionsTest {
    private static Environment env;
    @TempDir
    static Path work;

    @BeforeAll
    static void open() throws Exception {
        Files.createDirectories(Path.of(System.getenv("HOME")));
        env = Environments.open(Settings.of("airlock.container", "no", "airlock.local.workdir", work.toString()));
    }

    @AfterAll
    static void close() {
        env.close();
    }

    private static String stdout(AirlockTools tools, String command, ToolCall call, Object... more) {
        Map<String, Object> args = new java.util.LinkedHashMap<>(Map.of("command", command));
        for (int i = 0; i < more.length; i += 2) {
            args.put((String) more[i], more[i + 1]);
        }
        ToolResult r = tools.call("exec", args, call);
        assertFalse(r.isError(), r::error);
        return (String) r.structured().get("stdout");
    }

    @Test
    void cdAndExportCarryWithinADoorAndItsNamedSessionsStayApart() throws Exception {
        String sub = Files.createDirectories(work.resolve("sub dir")).toRealPath().toString();
        try (ExecSessions sessions = ExecSessions.perDoor(); ExecSessions other = ExecSessions.perDoor()) {
            AirlockTools tools = AirlockTools.over(env, sessions);
            stdout(tools, "cd '" + sub + "' && export X=1", ToolCall.unobserved());
            assertEquals(sub + "\n1\n", stdout(tools, "pwd; echo $X", ToolCall.unobserved()));
            assertEquals("unset\n", stdout(tools, "echo ${X-unset}", ToolCall.unobserved(), "session", "side"));
            assertEquals("unset\n", stdout(AirlockTools.over(env, other), "echo ${X-unset}", ToolCall.unobserved()),
                    "another door saw the state");
            ToolResult bad = tools.call("exec", Map.of("command", "true", "session", "a b"), ToolCall.unobserved());
            assertTrue(bad.isError() && bad.error().startsWith("invalid argument 'session'"), bad::error);
        }
    }

    @Test
    void perScopeKeepsEachConversationApart() {
        try (ExecSessions sessions = ExecSessions.perScope()) {
            AirlockTools tools = AirlockTools.over(env, sessions);
            stdout(tools, "export WHO=alice", ToolCall.unobserved().in("alice"));
            assertEquals("unset\n", stdout(tools, "echo ${WHO-unset}", ToolCall.unobserved().in("bob")));
            assertEquals("alice\n", stdout(tools, "echo $WHO", ToolCall.unobserved().in("alice")));
        }
    }

    @Test
    void withoutSessionsEveryExecStartsFreshAndTheArgumentIsRefused() {
        AirlockTools tools = AirlockTools.over(env);
        stdout(tools, "export X=1", ToolCall.unobserved());
        assertEquals("unset\n", stdout(tools, "echo ${X-unset}", ToolCall.unobserved()));
        ToolResult r = tools.call("exec", Map.of("command", "true", "session", "side"), ToolCall.unobserved());
        assertTrue(r.isError() && r.error().contains("'session'"), r::error);
        assertFalse(exec(tools).containsKey("session"), "the schema offers no session argument");
        assertTrue(exec(AirlockTools.over(env, ExecSessions.perDoor())).containsKey("session"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> exec(AirlockTools tools) {
        return (Map<String, Object>) tools.definitions().get(0).inputSchema().get("properties");
    }
}
