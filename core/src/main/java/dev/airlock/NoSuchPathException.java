package dev.airlock;

/** A path that an operation needs does not exist on the target. */
public class NoSuchPathException extends AirlockException {
    private static final long serialVersionUID = 1L;
    private final String path;

    public NoSuchPathException(String path) {
        super("no such file or directory: " + path);
        this.path = path;
    }

    public String path() {
        return path;
    }

    @Override
    public String kind() {
        return "not found";
    }
}
