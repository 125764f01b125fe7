package dev.airlock.langchain4j;

import dev.airlock.langchain4j.AirlockToolProvider;
import dev.airlock.safety.ApprovalChannel.ApprovalRequest;
import dev.airlock.safety.ApprovalChannel.Decision;
import dev.airlock.settings.Settings;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;

class AgentWithAirlock {
    interface Assistant {
        String chat(String message);
    }

    static void run(ChatModel model) {                 // any LangChain4j ChatModel
        try (AirlockToolProvider airlock = AirlockToolProvider.open(Settings.fromProcess(),
                request -> askTheUser(request))) {     // writes that need a human's approval
            Assistant assistant = AiServices.builder(Assistant.class)
                    .chatModel(model)
                    .toolProvider(airlock)               // exec, write_file, read_file, list_dir, stat, delete
                    .build();
            System.out.println(assistant.chat("How many bytes is /etc/hostname?"));
        }
    }

    static Decision askTheUser(ApprovalRequest request) {
        return Decision.DENY;                            // or ONCE, SESSION, ALWAYS: ask the user in your UI
    }
}
