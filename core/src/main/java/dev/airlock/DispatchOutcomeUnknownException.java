package dev.airlock;

/** A command was sent but whether it started is unknown (the response was lost). It is never sent twice. */
public class DispatchOutcomeUnknownException extends AirlockException {
    private static final long serialVersionUID = 1L;

    public DispatchOutcomeUnknownException(String message) {
        super(message);
    }

    public DispatchOutcomeUnknownException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public String kind() {
        return "unknown";
    }
}
