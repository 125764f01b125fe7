package dev.airlock.exec;

import dev.airlock.AirlockException;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.WriteOptions;
import dev.airlock.spi.ForwardingRemoteFiles;

import java.io.InputStream;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Reports each file change (write, delete, mkdirs, copyIn) to the environment's listeners when
 * it ends, as a {@code file} event naming the operation and the path, with the error where it
 * failed (a denial is reported by the guard as well). Reads, stats and lists are not reported.
 * Never the content: a listener sees what was changed, not with what.
 */
final class AuditedFiles extends ForwardingRemoteFiles {
    private final CoreEnvironment env;

    AuditedFiles(CoreEnvironment env, RemoteFiles delegate) {
        super(delegate);
        this.env = env;
    }

    private <T> T reported(String op, String path, Supplier<T> change) {
        T result;
        try {
            result = change.get();
        } catch (AirlockException e) {
            env.emit("file", path, Map.of("op", op, "error", e.kind(), "message", String.valueOf(e.getMessage())));
            throw e;
        }
        env.emit("file", path, result instanceof Boolean b ? Map.of("op", op, "changed", b) : Map.of("op", op));
        return result;
    }

    @Override
    public void write(String path, Payload content, WriteOptions options) {
        reported("write", path, () -> {
            delegate().write(path, content, options);
            return null;
        });
    }

    @Override
    public boolean delete(String path) {
        return reported("delete", path, () -> delegate().delete(path));
    }

    @Override
    public void mkdirs(String dir) {
        reported("mkdirs", dir, () -> {
            delegate().mkdirs(dir);
            return null;
        });
    }

    @Override
    public void copyIn(String dir, InputStream tar) {
        reported("copyIn", dir, () -> {
            delegate().copyIn(dir, tar);
            return null;
        });
    }
}
