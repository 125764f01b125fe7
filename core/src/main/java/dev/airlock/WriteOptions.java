package dev.airlock;

import java.util.OptionalInt;

/**
 * How {@link RemoteFiles#write} treats the target.
 *
 * @param mode          permission bits for the file; empty keeps an existing file's mode, else 0644
 * @param createParents create missing parent directories (default true)
 */
public record WriteOptions(OptionalInt mode, boolean createParents) {

    public static WriteOptions defaults() {
        return new WriteOptions(OptionalInt.empty(), true);
    }

    public static WriteOptions mode(int mode) {
        if (mode < 0 || mode > 07777) {
            throw new ConfigurationException("file mode must be between 0 and 07777, got " + Integer.toOctalString(mode));
        }
        return new WriteOptions(OptionalInt.of(mode), true);
    }

    public WriteOptions withCreateParents(boolean v) {
        return new WriteOptions(mode, v);
    }
}
