package dev.airlock.cli;

import dev.airlock.safety.ApprovalChannel;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Approvals through the MCP client: a write that needs a human is asked with an elicitation
 * (once, session, always or deny). Offered only to clients that declare elicitation; for the
 * others there is no channel and the guard refuses with its own message (fail closed).
 */
final class McpApprovals implements ApprovalChannel {
    static final String FIELD = "decision";

    private final AtomicReference<McpSyncServerExchange> exchange = new AtomicReference<>();

    /** Remembers the client's exchange (one stdio session: every call's exchange reaches the same client). */
    void use(McpSyncServerExchange e) {
        exchange.set(e);
    }

    /** This channel when the client can answer elicitations, else empty. */
    Optional<ApprovalChannel> channel() {
        McpSyncServerExchange e = exchange.get();
        McpSchema.ClientCapabilities caps = e == null ? null : e.getClientCapabilities();
        return caps != null && caps.elicitation() != null ? Optional.of(this) : Optional.empty();
    }

    @Override
    public Decision ask(ApprovalRequest r, Duration timeout) {
        McpSyncServerExchange e = exchange.get();
        if (e == null) {
            return Decision.DENY;
        }
        Map<String, Object> decision = new LinkedHashMap<>();
        decision.put("type", "string");
        decision.put("title", "Allow this write?");
        decision.put("description", "once: this write only; session: this path until the server stops;"
                + " always: remember it; deny: refuse");
        decision.put("enum", List.of("once", "session", "always", "deny"));
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "object");
        schema.put("properties", Map.of(FIELD, decision));
        schema.put("required", List.of(FIELD));
        String message = "Airlock: approval needed to write '" + r.path() + "' on " + r.backend() + " (" + r.target()
                + "). Why: " + r.reason() + ". Asked by: " + r.operation() + ". No answer within "
                + Math.max(1, timeout.toSeconds()) + "s denies.";
        McpSchema.ElicitResult result = e.createElicitation(McpSchema.ElicitFormRequest.builder(message, schema).build());
        if (result == null || result.action() != McpSchema.ElicitResult.Action.ACCEPT || result.content() == null) {
            return Decision.DENY;
        }
        Object answer = result.content().get(FIELD);
        return switch (String.valueOf(answer).trim().toLowerCase(Locale.ROOT)) {
            case "once" -> Decision.ONCE;
            case "session" -> Decision.SESSION;
            case "always" -> Decision.ALWAYS;
            default -> Decision.DENY;
        };
    }
}
