package dev.airlock;

/** The environment was closed; open a new one. */
public class EnvironmentClosedException extends AirlockException {
    private static final long serialVersionUID = 1L;

    public EnvironmentClosedException(String message) {
        super(message);
    }

    public EnvironmentClosedException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public String kind() {
        return "closed";
    }
}
