package dev.airlock.exec;

import dev.airlock.ConfigurationException;
import dev.airlock.DeniedException;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.FileStat;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.WriteOptions;
import dev.airlock.shell.SpecialFiles;

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
        env.safety().checkWrite(env.target().expand(path), operation);
    }

    /**
     * {@link SpecialFiles}' rule before a native write or delete, which runs no script of ours to
     * check it in: the native stat answers the common case (nothing there, a regular file) without
     * a process; a link, a directory to delete or an entry of another kind is checked on the
     * target by the rule's script, which follows the link and searches the tree. A race with a
     * command that makes such an entry meanwhile is not closed here (the kernel's isolation is).
     */
    private void refuseSpecial(String path, String operation) {
        Optional<FileStat> st = delegate.stat(path);
        if (st.isEmpty() || st.get().type() == FileStat.Type.FILE
                || (st.get().type() == FileStat.Type.DIRECTORY && !operation.equals("delete"))) {
            return;
        }
        String t = env.target().expand(path);
        String shown = operation.equals("delete") ? "delete" : "write to";
        dev.airlock.spi.RawResult r;
        try {
            r = env.runRaw(SpecialFiles.script(operation, t), null);
        } catch (java.io.IOException e) {
            throw new dev.airlock.BackendException(shown + " " + t + ": could not check what is at the path on "
                    + env.name() + " (" + e.getMessage() + "); nothing was changed, try again");
        }
        if (r.exit() == SpecialFiles.REFUSED) {
            throw new DeniedException(r.stderrLine());
        }
        if (st.get().type() == FileStat.Type.OTHER) {
            // the native stat saw a device, FIFO or socket that the script did not see (a relative path): refused all the same
            throw new DeniedException(SpecialFiles.message(shown, t, "a device, FIFO or socket"));
        }
    }

    /** Through {@link NativeWrites}, so closing the environment ends the write as it kills a shell write. */
    @Override
    public void write(String path, Payload content, WriteOptions options) {
        check(path, "write");
        refuseSpecial(path, "write");
        NativeWrites.Write w = env.nativeWrites().begin(content, "the write to " + path);
        try {
            delegate.write(path, w.payload(), options);
        } catch (RuntimeException e) {
            throw closedOr(w, "write to " + path, e);
        } finally {
            w.close();
        }
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
        refuseSpecial(path, "delete");
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
        NativeWrites.Write w = env.nativeWrites().begin(tar, "the copy into " + dir);
        try {
            delegate.copyIn(dir, w.stream());
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

    @Override
    public InputStream copyOut(String dir) {
        return delegate.copyOut(dir);
    }
}
