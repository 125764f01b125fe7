package dev.airlock.langchain4j;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.safety.ApprovalChannel.ApprovalRequest;
import dev.airlock.safety.ApprovalChannel.Decision;
import dev.airlock.settings.Settings;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tools through LangChain4j's own tool-execution path: an AI service whose (scripted) model
 * asks for tool calls, LangChain4j runs them through the provider, and the model reads the results.
 * Surefire gives this JVM a throwaway HOME and AIRLOCK_HOME, so ~/.ssh/config is a test file.
 */
class AirlockToolProviderTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path HOME = Path.of(System.getenv("HOME"));
    private static final Path SSH_CONFIG = HOME.resolve(".ssh/config");

    interface Agent {
        String chat(String message);
    }

    /**
     * The door's own behaviour and the guard's approvals through it, where the guard is the only net:
     * under bubblewrap (the local default) the kernel keeps ~/.ssh read-only whatever the guard answers.
     */
    private static Settings settings() {
        return Settings.of("airlock.container", "no", "airlock.local.isolation", "none");
    }

    @BeforeEach
    void freshHomes() throws IOException {
        for (Path dir : List.of(HOME, Path.of(System.getenv("AIRLOCK_HOME")))) {
            if (Files.exists(dir)) {
                try (Stream<Path> walk = Files.walk(dir)) {
                    walk.sorted(Comparator.reverseOrder()).filter(p -> !p.equals(dir)).forEach(p -> p.toFile().delete());
                }
            }
            Files.createDirectories(dir);
        }
    }

    /** Runs the scripted tool calls through an AI service and returns what the model was given back. */
    private static List<ToolExecutionResultMessage> run(AirlockToolProvider tools, String... nameAndArguments) {
        ScriptedChatModel model = script(nameAndArguments);
        Agent agent = AiServices.builder(Agent.class).chatModel(model).toolProvider(tools).build();
        assertEquals("done", agent.chat("go"));
        assertEquals(nameAndArguments.length / 2, model.results().size(), "every call came back");
        assertEquals(List.of("delete", "exec", "list_dir", "read_file", "stat", "write_file"), model.offeredTools().stream().sorted().toList());
        return model.results();
    }

    /** Each call is {@code tool name, JSON arguments}. */
    private static ScriptedChatModel script(String... nameAndArguments) {
        ScriptedChatModel.Builder b = ScriptedChatModel.builder();
        for (int i = 0; i < nameAndArguments.length; i += 2) {
            b.call(nameAndArguments[i], nameAndArguments[i + 1]);
        }
        return b.build();
    }

    interface Users {
        String chat(@MemoryId String user, @UserMessage String message);
    }

    /** The scripted calls as one turn of {@code user}'s conversation, through an AI service with a chat memory per user. */
    private static List<ToolExecutionResultMessage> runAs(AirlockToolProvider tools, String user, String... nameAndArguments) {
        ScriptedChatModel model = script(nameAndArguments);
        Users users = AiServices.builder(Users.class).chatModel(model).toolProvider(tools)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(50)).build();
        assertEquals("done", users.chat(user, "go"));
        assertEquals(nameAndArguments.length / 2, model.results().size(), "every call came back");
        return model.results();
    }

    private static JsonNode json(ToolExecutionResultMessage m) throws IOException {
        assertFalse(Boolean.TRUE.equals(m.isError()), m.text());
        return JSON.readTree(m.text());
    }

    private static String args(Object... kv) throws IOException {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return JSON.writeValueAsString(m);
    }

    @Test
    void execAndFilesAreByteExactThroughLangChain4j(@TempDir Path dir) throws Exception {
        byte[] payload = new byte[160 * 1024];
        new Random(21).nextBytes(payload);
        for (int i = 0; i < payload.length; i += 5) {
            payload[i] = 0;
        }
        String b64 = Base64.getEncoder().encodeToString(payload);
        String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(payload));
        Path file = dir.resolve("out/data.bin");

        try (AirlockToolProvider tools = AirlockToolProvider.open(settings())) {
            List<ToolExecutionResultMessage> r = run(tools,
                    "exec", args("command", "sha256sum; exit 4", "stdin_base64", b64),
                    "exec", args("command", "cat", "stdin_base64", b64),
                    "write_file", args("path", file.toString(), "content_base64", b64, "mode", "600"),
                    "read_file", args("path", file.toString()),
                    "stat", args("path", file.toString()),
                    "exec", args("command", "printf 'a\\nb'", "timeout_seconds", 30));

            JsonNode sum = json(r.get(0));
            assertEquals(4, sum.get("exit_code").asInt());
            assertEquals(digest + "  -\n", sum.get("stdout").asText());
            assertArrayEquals(payload, Base64.getDecoder().decode(json(r.get(1)).get("stdout_base64").asText()));
            assertEquals(payload.length, json(r.get(2)).get("size").asInt());
            assertArrayEquals(payload, Files.readAllBytes(file), "bytes on disk");
            JsonNode read = json(r.get(3));
            assertFalse(read.has("content"), "binary content is never sent as text");
            assertArrayEquals(payload, Base64.getDecoder().decode(read.get("content_base64").asText()));
            assertEquals("0600", json(r.get(4)).get("mode").asText());
            assertEquals("a\nb", json(r.get(5)).get("stdout").asText());
        }
    }

    /** Issue 34: cd and export carry between exec calls of one provider, as in one terminal, and no further. */
    @Test
    void execStateCarriesBetweenCallsOfOneProviderAndNotToAnother(@TempDir Path dir) throws Exception {
        String work = dir.toRealPath().toString();
        try (AirlockToolProvider tools = AirlockToolProvider.open(settings());
             AirlockToolProvider other = AirlockToolProvider.open(settings())) {
            List<ToolExecutionResultMessage> r = run(tools,
                    "exec", args("command", "cd '" + work + "' && export X=1"),
                    "exec", args("command", "pwd; echo $X"),
                    "exec", args("command", "echo ${X-unset}; export X=side", "session", "side"),
                    "exec", args("command", "echo $X"),
                    "exec", args("command", "true", "session", "../x"));
            assertEquals(work + "\n1\n", json(r.get(1)).get("stdout").asText());
            assertEquals("unset\n", json(r.get(2)).get("stdout").asText(), "a named session starts apart");
            assertEquals("1\n", json(r.get(3)).get("stdout").asText(), "the main session kept its own state");
            assertTrue(Boolean.TRUE.equals(r.get(4).isError()) && r.get(4).text().contains("'session'"), r.get(4).text());
            List<ToolExecutionResultMessage> o = run(other, "exec", args("command", "echo ${X-unset}"));
            assertEquals("unset\n", json(o.get(0)).get("stdout").asText(), "another provider saw the state");
        }
        try (Environment env = Environments.open(settings());
             AirlockToolProvider fresh = AirlockToolProvider.over(env, SessionScope.NONE)) {
            List<ToolExecutionResultMessage> r = run(fresh,
                    "exec", args("command", "export X=1"),
                    "exec", args("command", "echo ${X-unset}"),
                    "exec", args("command", "true", "session", "side"));
            assertEquals("unset\n", json(r.get(1)).get("stdout").asText(), "SessionScope.NONE starts every exec fresh");
            assertTrue(Boolean.TRUE.equals(r.get(2).isError()) && r.get(2).text().contains("'session'"), r.get(2).text());
        }
    }

    /** SessionScope.CHAT_MEMORY: each conversation (chat memory id) of one provider has its own session. */
    @Test
    void eachChatMemoryHasItsOwnSessionUnderChatMemoryScope(@TempDir Path dir) throws Exception {
        String work = dir.toRealPath().toString();
        try (AirlockToolProvider tools = AirlockToolProvider.open(settings(), request -> Decision.DENY, SessionScope.CHAT_MEMORY)) {
            runAs(tools, "alice", "exec", args("command", "cd '" + work + "' && export WHO=alice"));
            List<ToolExecutionResultMessage> bob = runAs(tools, "bob", "exec", args("command", "pwd; echo ${WHO-unset}"));
            assertFalse(json(bob.get(0)).get("stdout").asText().startsWith(work + "\n"), "bob saw alice's directory");
            assertTrue(json(bob.get(0)).get("stdout").asText().endsWith("\nunset\n"), json(bob.get(0)).toString());
            List<ToolExecutionResultMessage> alice = runAs(tools, "alice", "exec", args("command", "pwd; echo $WHO"));
            assertEquals(work + "\nalice\n", json(alice.get(0)).get("stdout").asText());
        }
    }

    @Test
    void badArgumentsAreToolErrorsNamingTheField() {
        try (AirlockToolProvider tools = AirlockToolProvider.open(settings())) {
            List<ToolExecutionResultMessage> r = run(tools,
                    "exec", "{\"cmd\": \"ls\"}",
                    "write_file", "{\"path\": \"/tmp/x\"}",
                    "exec", "{not json",
                    "exec", "{\"command\": \"true\", \"timeout_seconds\": -1}");

            assertTrue(r.get(0).text().contains("'cmd'"), r.get(0).text());
            assertTrue(r.get(1).text().contains("'content'"), r.get(1).text());
            assertTrue(r.get(2).text().startsWith("invalid arguments"), r.get(2).text());
            assertTrue(r.get(3).text().contains("'timeout_seconds'"), r.get(3).text());
            r.forEach(m -> assertEquals(Boolean.TRUE, m.isError(), m.text()));
        }
    }

    /** Answers with the scripted decisions in turn and records each question. */
    private static final class Answers implements ApprovalCallback {
        private final List<Decision> decisions;
        final List<ApprovalRequest> asked = new ArrayList<>();

        Answers(Decision... decisions) {
            this.decisions = new ArrayList<>(List.of(decisions));
        }

        @Override
        public synchronized Decision decide(ApprovalRequest request) {
            asked.add(request);
            return decisions.remove(0);
        }
    }

    private static String write(String content) throws IOException {
        return args("path", "~/.ssh/config", "content", content);
    }

    @Test
    void onceApprovesOneWriteAndTheNextIsAskedAgain() throws Exception {
        Answers answers = new Answers(Decision.ONCE, Decision.DENY);
        try (AirlockToolProvider tools = AirlockToolProvider.open(settings(), answers)) {
            List<ToolExecutionResultMessage> r = run(tools, "write_file", write("Host a\n"), "write_file", write("Host b\n"));

            json(r.get(0));
            assertEquals(Boolean.TRUE, r.get(1).isError());
            assertTrue(r.get(1).text().startsWith("denied: "), r.get(1).text());
        }
        assertEquals(2, answers.asked.size());
        assertTrue(answers.asked.get(0).path().endsWith("/.ssh/config"), answers.asked.get(0).toString());
        assertEquals("Host a\n", Files.readString(SSH_CONFIG));
    }

    @Test
    void sessionApprovesThePathUntilTheToolsClose() throws Exception {
        Answers answers = new Answers(Decision.SESSION, Decision.DENY);
        try (AirlockToolProvider tools = AirlockToolProvider.open(settings(), answers)) {
            List<ToolExecutionResultMessage> r = run(tools, "write_file", write("Host a\n"),
                    "exec", args("command", "printf 'Host b\\n' > ~/.ssh/config"));

            json(r.get(0));
            assertEquals(0, json(r.get(1)).get("exit_code").asInt(), "the command's write was covered by the session");
        }
        assertEquals(1, answers.asked.size());
        assertEquals("Host b\n", Files.readString(SSH_CONFIG));

        try (AirlockToolProvider tools = AirlockToolProvider.open(settings(), answers)) {
            List<ToolExecutionResultMessage> r = run(tools, "write_file", write("Host c\n"));
            assertEquals(Boolean.TRUE, r.get(0).isError(), "a new session asks again (and this answer denies)");
        }
        assertEquals(2, answers.asked.size());
        assertEquals("Host b\n", Files.readString(SSH_CONFIG));
    }

    @Test
    void alwaysIsRememberedAcrossSessions() throws Exception {
        Answers answers = new Answers(Decision.ALWAYS);
        try (AirlockToolProvider tools = AirlockToolProvider.open(settings(), answers)) {
            json(run(tools, "write_file", write("Host a\n")).get(0));
        }
        try (AirlockToolProvider tools = AirlockToolProvider.open(settings(), answers)) {
            json(run(tools, "write_file", write("Host b\n")).get(0));
        }
        assertEquals(1, answers.asked.size(), "the second session was not asked");
        assertEquals("Host b\n", Files.readString(SSH_CONFIG));
    }

    @Test
    void denyRefusesWritesByFileAndByCommand() throws Exception {
        Answers answers = new Answers(Decision.DENY, Decision.DENY);
        try (AirlockToolProvider tools = AirlockToolProvider.open(settings(), answers)) {
            List<ToolExecutionResultMessage> r = run(tools, "write_file", write("Host a\n"),
                    "exec", args("command", "echo 'Host b' > ~/.ssh/config"));

            for (ToolExecutionResultMessage m : r) {
                assertEquals(Boolean.TRUE, m.isError(), m.text());
                assertTrue(m.text().startsWith("denied: "), m.text());
            }
        }
        assertEquals(2, answers.asked.size());
        assertFalse(Files.exists(SSH_CONFIG));
    }

    @Test
    void aCallbackThatFailsDeniesAndNoCallbackFailsClosed() throws Exception {
        try (AirlockToolProvider tools = AirlockToolProvider.open(settings(), request -> {
            throw new IllegalStateException("the user is away");
        })) {
            ToolExecutionResultMessage m = run(tools, "write_file", write("Host a\n")).get(0);
            assertTrue(m.text().startsWith("denied: "), m.text());
        }
        try (AirlockToolProvider tools = AirlockToolProvider.open(settings())) {
            ToolExecutionResultMessage m = run(tools, "write_file", write("Host a\n")).get(0);
            assertTrue(m.text().startsWith("denied: ") && m.text().contains("approval"), m.text());
        }
        assertFalse(Files.exists(SSH_CONFIG));
    }
}
