package dev.airlock.langchain4j;

import dev.airlock.safety.ApprovalChannel.ApprovalRequest;
import dev.airlock.safety.ApprovalChannel.Decision;

/**
 * The application's answer when a tool call wants to write a file that needs a human's approval
 * (for example {@code ~/.ssh/config}): ask the user in the chat, a dialog, a ticket. Return
 * {@link Decision#ONCE} (this write only), {@link Decision#SESSION} (this path until the tools are
 * closed), {@link Decision#ALWAYS} (remembered in Airlock's allowlist) or {@link Decision#DENY}.
 *
 * <p>Silence is not consent: a callback that throws, returns null, or takes longer than
 * {@code airlock.approvals.timeout} (60s by default) denies. Hard-denied paths (credentials,
 * system files) never reach it.
 */
@FunctionalInterface
public interface ApprovalCallback {

    Decision decide(ApprovalRequest request);
}
