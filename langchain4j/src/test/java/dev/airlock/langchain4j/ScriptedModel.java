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

/**
 * A chat model with no model behind it: each turn it asks for the next scripted tool call, and it
 * records the tool results LangChain4j hands back, exactly as a real model would read them.
 */
final class ScriptedModel implements ChatModel {
    private final Deque<ToolExecutionRequest> calls = new ArrayDeque<>();
    private final List<ToolExecutionResultMessage> results = new ArrayList<>();
    private final List<String> offeredTools = new ArrayList<>();
    private int next;

    /** Each call is {@code tool name, JSON arguments}. */
    ScriptedModel(String... nameAndArguments) {
        for (int i = 0; i < nameAndArguments.length; i += 2) {
            calls.add(ToolExecutionRequest.builder().id("call-" + (next++)).name(nameAndArguments[i])
                    .arguments(nameAndArguments[i + 1]).build());
        }
    }

    @Override
    public ChatResponse doChat(ChatRequest request) {
        if (offeredTools.isEmpty() && request.parameters().toolSpecifications() != null) {
            request.parameters().toolSpecifications().forEach(t -> offeredTools.add(t.name()));
        }
        List<ChatMessage> messages = request.messages();
        ChatMessage last = messages.get(messages.size() - 1);
        if (last instanceof ToolExecutionResultMessage r) {
            results.add(r);
        }
        AiMessage answer = calls.isEmpty() ? AiMessage.from("done") : AiMessage.from(List.of(calls.poll()));
        return ChatResponse.builder().aiMessage(answer).build();
    }

    List<ToolExecutionResultMessage> results() {
        return results;
    }

    List<String> offeredTools() {
        return offeredTools;
    }
}
