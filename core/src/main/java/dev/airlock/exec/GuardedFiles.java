package dev.airlock.exec;

import dev.airlock.ConfigurationException;
import dev.airlock.FileStat;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.WriteOptions;

import java.io.InputStream;
import java.util.List;
import java.util.Optional;

/** A backend's native file API behind the same write tiers as {@link ShellFiles}: one rule per file. */
final class GuardedFiles implements RemoteFiles {
    private final CoreEnvironment env;
    private final RemoteFiles delegate;

    GuardedFiles(CoreEnvironment env, RemoteFiles delegate) {
        this.env = env;
        this.delegate = delegate;
    }

    private void check(String path, String operation) {
        if (path == null || path.isEmpty() || path.indexOf('\0') >= 0) {
            throw new ConfigurationException("a path must be non-empty and hold no NUL byte");
        }
        env.beforeWrite(env.target().expand(path), operation);
    }

    @Override
    public void write(String path, Payload content, WriteOptions options) {
        check(path, "write");
        delegate.write(path, content, options);
    }

    @Override
    public InputStream read(String path) {
        return delegate.read(path);
    }

    @Override
    public Optional<FileStat> stat(String path) {
        return delegate.stat(path);
    }

    @Override
    public List<FileStat> list(String dir) {
        return delegate.list(dir);
    }

    @Override
    public boolean delete(String path) {
        check(path, "delete");
        return delegate.delete(path);
    }

    @Override
    public void mkdirs(String dir) {
        check(dir, "mkdirs");
        delegate.mkdirs(dir);
    }

    @Override
    public void copyIn(String dir, InputStream tar) {
        check(dir, "copyIn");
        delegate.copyIn(dir, tar);
    }

    @Override
    public InputStream copyOut(String dir) {
        return delegate.copyOut(dir);
    }
}
