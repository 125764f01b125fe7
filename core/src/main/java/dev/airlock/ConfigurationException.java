package dev.airlock;

/** A setting or argument is missing or invalid; the message names it and the valid values. */
public class ConfigurationException extends AirlockException {
    private static final long serialVersionUID = 1L;

    public ConfigurationException(String message) {
        super(message);
    }

    public ConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public String kind() {
        return "usage";
    }
}
