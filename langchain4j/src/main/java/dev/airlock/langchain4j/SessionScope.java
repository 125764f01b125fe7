package dev.airlock.langchain4j;

/**
 * How the {@code exec} calls of an {@link AirlockToolProvider} share shell sessions: which calls
 * see each other's {@code cd} and {@code export}. A call's {@code session} argument names another
 * session within the same scope; commands of one session run one at a time.
 */
public enum SessionScope {
    /** One session for every call of the provider (the default). */
    PROVIDER,
    /**
     * One session per chat memory id: each conversation of an AI service with a
     * {@code ChatMemoryProvider} (each user, say) has its own directory and variables, and the
     * conversations' commands run side by side. Each lives until the provider closes.
     */
    CHAT_MEMORY,
    /** No sessions: every exec starts fresh in the environment's working directory. */
    NONE
}
