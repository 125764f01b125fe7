package dev.airlock.langchain4j;

import dev.airlock.safety.ApprovalChannel;
import org.slf4j.LoggerFactory;

import java.time.Duration;

/** Bridges the application's {@link ApprovalCallback} to Airlock's approval gate; failures deny. */
final class CallbackApprovalChannel implements ApprovalChannel {
    private final ApprovalCallback callback;

    CallbackApprovalChannel(ApprovalCallback callback) {
        this.callback = callback;
    }

    @Override
    public Decision ask(ApprovalRequest request, Duration timeout) {
        try {
            Decision d = callback.decide(request);
            return d == null ? Decision.DENY : d;
        } catch (RuntimeException e) {
            LoggerFactory.getLogger(CallbackApprovalChannel.class)
                    .warn("the approval callback failed, so the write to {} is denied: {}", request.path(), e.toString());
            return Decision.DENY;
        }
    }
}
