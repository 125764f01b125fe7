package dev.airlock.langchain4j;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The README's LangChain4j example is {@link AgentWithAirlock}, verbatim; it compiles and runs (its model scripted). */
class ReadmeExampleTest {
    private static final Path MODULE = Path.of(System.getProperty("user.dir"));

    @Test
    void theReadmeShowsExactlyTheExampleCompiledHere() throws Exception {
        String source = Files.readString(MODULE.resolve("src/test/java/dev/airlock/langchain4j/AgentWithAirlock.java"));
        String example = source.substring(source.indexOf('\n', source.indexOf("package ")) + 1).strip();
        String readme = Files.readString(MODULE.resolve("../README.md"));
        assertTrue(readme.contains("```java\n" + example + "\n```"), "README.md must show, verbatim:\n" + example);
    }

    @Test
    void theReadmeExampleRuns() {
        ScriptedChatModel model = ScriptedChatModel.builder().call("exec", "{\"command\": \"printf 12345 | wc -c\"}").build();
        PrintStream out = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try {
            AgentWithAirlock.run(model);
        } finally {
            System.setOut(out);
        }
        assertEquals("done\n", printed.toString(StandardCharsets.UTF_8).replace("\r\n", "\n"));
        assertEquals(1, model.results().size());
        assertTrue(model.results().get(0).text().contains("\"stdout\":\"5\\n\""), model.results().get(0).text());
    }
}
