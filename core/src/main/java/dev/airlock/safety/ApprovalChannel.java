package dev.airlock.safety;

import java.time.Duration;

/**
 * A human who can approve a write that needs approval. Agent runtimes implement it (a chat
 * message, a UI dialog); the CLI asks on {@code /dev/tty}. Silence is not consent: a channel that
 * cannot get an answer within {@code timeout} returns {@link Decision#DENY}.
 */
@FunctionalInterface
public interface ApprovalChannel {

    Decision ask(ApprovalRequest request, Duration timeout);

    /** How long an approval lasts. */
    enum Decision { ONCE, SESSION, ALWAYS, DENY }

    /**
     * @param backend   the backend name
     * @param target    the target's identity (user@host)
     * @param path      the canonical path on the target
     * @param operation what is being done ("write", "exec: ...")
     * @param reason    why it needs approval
     */
    record ApprovalRequest(String backend, String target, String path, String operation, String reason) {
    }
}
