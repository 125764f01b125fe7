package dev.airlock;

/** A write or command was refused by the safety tiers or the approval gate. Retrying through another tool will meet the same rule. */
public class DeniedException extends AirlockException {
    private static final long serialVersionUID = 1L;

    public DeniedException(String message) {
        super(message);
    }

    public DeniedException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public String kind() {
        return "denied";
    }
}
