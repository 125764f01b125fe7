package dev.airlock.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;

/**
 * A {@link ChatModel} with no model behind it, for testing an agent built on Airlock's tools
 * without a network or an API key: each turn it asks for the next scripted tool call, exactly as a
 * model would, and once the script is done it answers with a final text. It records the tool
 * results LangChain4j hands back, which is what a real model would read.
 *
 * <pre>{@code
 * import dev.airlock.langchain4j.AirlockToolProvider;
 * import dev.airlock.langchain4j.ScriptedChatModel;
 * import dev.langchain4j.service.AiServices;
 *
 * class AgentTest {
 *     interface Assistant {
 *         String chat(String message);
 *     }
 *
 *     static String run(AirlockToolProvider airlock) {
 *         ScriptedChatModel model = ScriptedChatModel.builder()
 *                 .call("exec", "{\"command\": \"cd /tmp && export X=1\"}")
 *                 .call("exec", "{\"command\": \"pwd; echo $X\"}")
 *                 .answer("done")
 *                 .build();
 *         Assistant assistant = AiServices.builder(Assistant.class).chatModel(model).toolProvider(airlock).build();
 *         assistant.chat("go");                          // "done"
 *         return model.results().get(1).text();          // {"exit_code":0,"stdout":"/tmp\n1\n",...}
 *     }
 * }
 * }</pre>
 *
 * <p>One scripted call per turn, in order; a model built once serves one script (calls after it
 * ends get the answer). Safe to call from several threads; the calls are taken in arrival order.
 */
public final class ScriptedChatModel implements ChatModel {
    private final Deque<ToolExecutionRequest> calls;
    private final String answer;
    private final List<ToolExecutionResultMessage> results = new ArrayList<>();
    private final List<String> offeredTools = new ArrayList<>();

    private ScriptedChatModel(List<ToolExecutionRequest> calls, String answer) {
        this.calls = new ArrayDeque<>(calls);
        this.answer = answer;
    }

    /** A new script: {@link Builder#call} per tool call, then {@link Builder#answer}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Answers the request: the next scripted tool call, or the final answer when none is left. */
    @Override
    public synchronized ChatResponse doChat(ChatRequest request) {
        if (offeredTools.isEmpty() && request.parameters() != null && request.parameters().toolSpecifications() != null) {
            request.parameters().toolSpecifications().forEach(t -> offeredTools.add(t.name()));
        }
        List<ChatMessage> messages = request.messages();
        if (!messages.isEmpty() && messages.get(messages.size() - 1) instanceof ToolExecutionResultMessage r) {
            results.add(r);
        }
        ToolExecutionRequest next = calls.poll();
        AiMessage message = next == null ? AiMessage.from(answer) : AiMessage.from(List.of(next));
        return ChatResponse.builder().aiMessage(message).build();
    }

    /** The tool results handed back so far, in order (one per scripted call that ran). */
    public synchronized List<ToolExecutionResultMessage> results() {
        return List.copyOf(results);
    }

    /** The names of the tools the first request offered the model. */
    public synchronized List<String> offeredTools() {
        return List.copyOf(offeredTools);
    }

    /** Builds a {@link ScriptedChatModel}. */
    public static final class Builder {
        private final List<ToolExecutionRequest> calls = new ArrayList<>();
        private String answer = "done";

        private Builder() {
        }

        /**
         * A tool call, as the model would make it.
         *
         * @param tool          the tool's name, such as {@code exec}
         * @param jsonArguments its arguments as a JSON object, such as {@code {"command": "ls"}}
         */
        public Builder call(String tool, String jsonArguments) {
            calls.add(ToolExecutionRequest.builder().id("call-" + calls.size())
                    .name(Objects.requireNonNull(tool, "tool"))
                    .arguments(Objects.requireNonNull(jsonArguments, "jsonArguments")).build());
            return this;
        }

        /** The text the model answers once the calls are done; {@code "done"} unless set. */
        public Builder answer(String text) {
            this.answer = Objects.requireNonNull(text, "text");
            return this;
        }

        /** The model, ready to serve the script once. */
        public ScriptedChatModel build() {
            return new ScriptedChatModel(calls, answer);
        }
    }
}
