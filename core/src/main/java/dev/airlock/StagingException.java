package dev.airlock;

/** Stdin or a script could not be staged on the target, or the staged redirect failed (reserved exit 201). The command did not run. */
public class StagingException extends AirlockException {
    private static final long serialVersionUID = 1L;

    public StagingException(String message) {
        super(message);
    }

    public StagingException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public String kind() {
        return "staging";
    }
}
