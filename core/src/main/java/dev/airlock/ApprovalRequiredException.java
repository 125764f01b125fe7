package dev.airlock;

/** The operation needs a human's approval and none could be obtained (no channel, a timeout, or cron context). */
public class ApprovalRequiredException extends DeniedException {
    private static final long serialVersionUID = 1L;

    public ApprovalRequiredException(String message) {
        super(message);
    }

    public ApprovalRequiredException(String message, Throwable cause) {
        super(message, cause);
    }
}
