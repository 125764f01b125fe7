package dev.airlock.cli;

import dev.airlock.BackendException;
import dev.airlock.session.SessionBusyException;
import dev.airlock.session.SessionStore;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

/**
 * A named session's state on the operator's host: {@code DIR/NAME.snapshot} (0600, replaced
 * atomically), held by a lock on {@code DIR/NAME.lock} for one invocation, so two invocations of
 * one session run one after the other (or the second fails at once when it must not wait).
 */
final class FileSessionStore implements SessionStore, AutoCloseable {
    /** A session's state is {@code NAME + SUFFIX} in its directory. */
    static final String SUFFIX = ".snapshot";

    private final Path snapshot;
    private final String name;
    private final FileChannel lockFile;
    private final FileLock lock;

    private FileSessionStore(Path snapshot, String name, FileChannel lockFile, FileLock lock) {
        this.snapshot = snapshot;
        this.name = name;
        this.lockFile = lockFile;
        this.lock = lock;
    }

    static FileSessionStore open(Path dir, String name, boolean wait) {
        FileChannel ch = null;
        try {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            ch = FileChannel.open(dir.resolve(name + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock = wait ? ch.lock() : ch.tryLock();
            if (lock == null) {
                throw new SessionBusyException("session " + name + " is in use by another airlock command and"
                        + " airlock.session.wait=false; wait for it to end, or drop that setting to queue behind it");
            }
            return new FileSessionStore(dir.resolve(name + SUFFIX), name, ch, lock);
        } catch (IOException | OverlappingFileLockException e) {
            closeQuietly(ch);
            throw new BackendException("cannot open session " + name + " under " + dir + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeQuietly(ch);
            throw e;
        }
    }

    /**
     * Removes NAME's state under {@code dir}; false when it has none there. A session a command holds
     * right now is not removed (its command would save it again as it ends).
     */
    static boolean remove(Path dir, String name) {
        Path snapshot = dir.resolve(name + SUFFIX);
        if (!Files.exists(snapshot)) {
            return false;
        }
        try (FileChannel ch = FileChannel.open(dir.resolve(name + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock lock = ch.tryLock()) {
            if (lock == null) {
                throw new SessionBusyException("session " + name + " is in use by a running airlock command;"
                        + " end it after that command ends");
            }
            return Files.deleteIfExists(snapshot);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot end session " + name + " under " + dir + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Optional<byte[]> load() {
        try (InputStream in = Files.newInputStream(snapshot)) {
            byte[] state = in.readNBytes(MAX_SNAPSHOT_BYTES + 1);
            if (state.length > MAX_SNAPSHOT_BYTES) {
                throw new BackendException("session " + name + ": " + snapshot + " is over "
                        + (MAX_SNAPSHOT_BYTES >> 20) + " MiB; remove it to start the session afresh");
            }
            return Optional.of(state);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read session " + name + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void save(byte[] state) {
        Path tmp = null;
        try {
            tmp = Files.createTempFile(snapshot.getParent(), "." + name + ".", ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.write(tmp, state);
            Files.move(tmp, snapshot, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            try {
                if (tmp != null) {
                    Files.deleteIfExists(tmp);
                }
            } catch (IOException ignored) {
                // the temp file is in the session's own 0700 dir
            }
            throw new UncheckedIOException("cannot save session " + name + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException ignored) {
            // closing the channel releases it too
        }
        closeQuietly(lockFile);
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // nothing was written through it
            }
        }
    }
}
