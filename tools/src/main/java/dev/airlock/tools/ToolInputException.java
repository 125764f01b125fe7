package dev.airlock.tools;

/** An argument a tool cannot use; the message names the field and says what it should be. */
final class ToolInputException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ToolInputException(String field, String problem) {
        super("invalid argument '" + field + "': " + problem);
    }
}
