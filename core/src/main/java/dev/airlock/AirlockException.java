package dev.airlock;

/**
 * Root of Airlock's own failures. Every subclass carries a one-line message that says what is
 * wrong and what to do, and never contains a secret. The CLI maps each kind to an exit code in
 * one place ({@link #kind()}).
 */
public abstract class AirlockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    protected AirlockException(String message) {
        super(message);
    }

    protected AirlockException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The word the CLI prints after {@code airlock: } ({@code denied}, {@code unavailable}...), or empty. */
    public abstract String kind();
}
