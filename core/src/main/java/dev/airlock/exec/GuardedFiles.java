package dev.airlock.exec;

import dev.airlock.ConfigurationException;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.WriteOptions;
import dev.airlock.spi.ForwardingRemoteFiles;

import java.io.InputStream;

/** A backend's native file API behind the same write tiers as {@link ShellFiles}: one rule per file. */
final class GuardedFiles extends ForwardingRemoteFiles {
    private final CoreEnvironment env;

    GuardedFiles(CoreEnvironment env, RemoteFiles delegate) {
        super(delegate);
        this.env = env;
    }

    private void check(String path, String operation) {
        if (path == null || path.isEmpty() || path.indexOf('\0') >= 0) {
            throw new ConfigurationException("a path must be non-empty and hold no NUL byte");
        }
        env.safety().checkWrite(env.target().expand(path), operation);
    }

    /** Through {@link NativeWrites}, so closing the environment ends the write as it kills a shell write. */
    @Override
    public void write(String path, Payload content, WriteOptions options) {
        check(path, "write");
        NativeWrites.Write w = env.nativeWrites().begin(content, "the write to " + path);
        try {
            delegate().write(path, w.payload(), options);
        } catch (RuntimeException e) {
            throw closedOr(w, "write to " + path, e);
        } finally {
            w.close();
        }
    }

    @Override
    public boolean delete(String path) {
        check(path, "delete");
        return delegate().delete(path);
    }

    @Override
    public void mkdirs(String dir) {
        check(dir, "mkdirs");
        delegate().mkdirs(dir);
    }

    @Override
    public void copyIn(String dir, InputStream tar) {
        check(dir, "copyIn");
        NativeWrites.Write w = env.nativeWrites().begin(tar, "the copy into " + dir);
        try {
            delegate().copyIn(dir, w.stream());
        } catch (RuntimeException e) {
            throw closedOr(w, "copy into " + dir, e);
        } finally {
            w.close();
        }
    }

    /** A failure that the environment's close caused is reported as that, whatever the backend made of it. */
    private RuntimeException closedOr(NativeWrites.Write w, String what, RuntimeException e) {
        if (w.aborted() && !(e instanceof EnvironmentClosedException)) {
            return new EnvironmentClosedException("the " + env.name() + " environment " + env.id()
                    + " was closed during the " + what + ", which stopped it unfinished", e);
        }
        return e;
    }
}
