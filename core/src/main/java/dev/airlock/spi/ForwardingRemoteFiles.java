package dev.airlock.spi;

import dev.airlock.FileStat;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.WriteOptions;

import java.io.InputStream;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@link RemoteFiles} that hands every operation to another one. Extend it, override the
 * operations you do yourself (a native write through the service's own file API, say) and leave
 * the rest to the delegate, usually the core's shell implementation
 * ({@link CoreAccess#shellFiles()}). The core's own layers (the guard, the audit) are built the
 * same way.
 */
public abstract class ForwardingRemoteFiles implements RemoteFiles {
    private final RemoteFiles delegate;

    protected ForwardingRemoteFiles(RemoteFiles delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** Where the operations this class does not override go. */
    protected final RemoteFiles delegate() {
        return delegate;
    }

    @Override
    public void write(String path, Payload content, WriteOptions options) {
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
        return delegate.delete(path);
    }

    @Override
    public void mkdirs(String dir) {
        delegate.mkdirs(dir);
    }

    @Override
    public void copyIn(String dir, InputStream tar) {
        delegate.copyIn(dir, tar);
    }

    @Override
    public InputStream copyOut(String dir) {
        return delegate.copyOut(dir);
    }
}
