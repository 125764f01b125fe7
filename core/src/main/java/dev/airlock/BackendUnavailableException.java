package dev.airlock;

/** The backend cannot be reached or is not installed; the message says which and how to fix it. */
public class BackendUnavailableException extends AirlockException {
    private static final long serialVersionUID = 1L;

    public BackendUnavailableException(String message) {
        super(message);
    }

    public BackendUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public String kind() {
        return "unavailable";
    }
}
