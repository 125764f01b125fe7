package dev.airlock;

/** The backend failed while running an operation (I/O, protocol, a vanished sandbox). */
public class BackendException extends AirlockException {
    private static final long serialVersionUID = 1L;

    public BackendException(String message) {
        super(message);
    }

    public BackendException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public String kind() {
        return "error";
    }
}
