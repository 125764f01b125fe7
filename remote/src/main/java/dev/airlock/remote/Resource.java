package dev.airlock.remote;

import java.util.Objects;

/**
 * What a call was about, so a 404 can say the right thing: a sandbox that is gone means the
 * environment is over; a file that is gone is an ordinary missing path.
 */
public record Resource(Type type, String id) {
    public enum Type { SANDBOX, PATH, OTHER }

    public Resource {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(id, "id");
    }

    public static Resource sandbox(String id) {
        return new Resource(Type.SANDBOX, id);
    }

    public static Resource path(String path) {
        return new Resource(Type.PATH, path);
    }

    public static Resource none() {
        return new Resource(Type.OTHER, "");
    }
}
