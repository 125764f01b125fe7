package dev.airlock.langchain4j;

import dev.airlock.safety.ApprovalChannel.ApprovalRequest;
import dev.airlock.safety.ApprovalChannel.Decision;
import dev.airlock.settings.Settings;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The README's LangChain4j example, kept compiling and running (its model scripted). */
class ReadmeExampleTest {

    // --- README: begin (keep in step with README.md, "Agent integrations: LangChain4j") ---
    interface Assistant {
        String chat(String message);
    }

    static void example(ChatModel model) {
        try (AirlockToolProvider airlock = AirlockToolProvider.open(Settings.fromProcess(),
                request -> askTheUser(request))) {         // ONCE, SESSION, ALWAYS or DENY
            Assistant assistant = AiServices.builder(Assistant.class)
                    .chatModel(model)                        // any LangChain4j ChatModel
                    .toolProvider(airlock)                   // exec, write_file, read_file, list_dir, stat, delete
                    .build();
            System.out.println(assistant.chat("How many bytes is /etc/hostname?"));
        }
    }
    // --- README: end ---

    static Decision askTheUser(ApprovalRequest request) {
        return Decision.DENY;
    }

    @Test
    void theReadmeExampleRuns() {
        ScriptedModel model = new ScriptedModel("exec", "{\"command\": \"printf 12345 | wc -c\"}");
        PrintStream out = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try {
            example(model);
        } finally {
            System.setOut(out);
        }
        assertEquals("done\n", printed.toString(StandardCharsets.UTF_8).replace("\r\n", "\n"));
        assertEquals(1, model.results().size());
        assertTrue(model.results().get(0).text().contains("\"stdout\":\"5\\n\""), model.results().get(0).text());
    }
}
