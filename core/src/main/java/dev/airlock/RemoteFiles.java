package dev.airlock;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;

/**
 * Files on the target, byte-exact and streamed both ways. Paths are target paths; a leading
 * {@code ~} expands to the environment's home. Every operation passes the same safety rules as a
 * command that touches the same path.
 */
public interface RemoteFiles {
    /** The most {@link #readBytes} returns: 64 MiB. Stream a larger file with {@link #read}. */
    int MAX_READ_BYTES = 64 << 20;

    /**
     * Writes {@code content} to {@code path} atomically: readers see the old file or the whole new
     * one, never a part. An existing file keeps its mode unless {@code options} sets one; a
     * symlinked target is written through (the link stays). The size is verified afterwards.
     *
     * @throws DeniedException when the target (or the end of its symlink) is a device, FIFO or
     *         socket: Airlock never replaces one
     */
    void write(String path, Payload content, WriteOptions options);

    default void write(String path, Payload content) {
        write(path, content, WriteOptions.defaults());
    }

    default void write(String path, byte[] content) {
        write(path, Payload.of(content), WriteOptions.defaults());
    }

    /**
     * Streams the file's bytes. Closing the stream early stops the remote reader.
     *
     * @throws NoSuchPathException when the path does not exist
     */
    InputStream read(String path);

    /**
     * The whole file, for a small one: at most {@link #MAX_READ_BYTES}, so a large file can never
     * exhaust the heap.
     *
     * @throws ConfigurationException when the file is larger: stream it with {@link #read} instead
     * @throws NoSuchPathException when the path does not exist
     */
    default byte[] readBytes(String path) {
        try (InputStream in = read(path)) {
            byte[] bytes = in.readNBytes(MAX_READ_BYTES + 1);
            if (bytes.length > MAX_READ_BYTES) {
                throw new ConfigurationException(path + " is over " + (MAX_READ_BYTES >> 20) + " MiB, more than readBytes"
                        + " returns: stream it with files().read(path)");
            }
            return bytes;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path + ": " + e.getMessage(), e);
        }
    }

    /** The entry at {@code path} (not following a final symlink), or empty when there is none. */
    Optional<FileStat> stat(String path);

    /**
     * The entries of a directory, sorted by name.
     *
     * @throws NoSuchPathException when the directory does not exist
     */
    List<FileStat> list(String dir);

    /**
     * Removes a file, a symlink (never its target) or a whole directory tree. Returns false when
     * nothing was there.
     *
     * @throws DeniedException when the path is, or its symlink leads to, a device, FIFO or socket,
     *         or the tree holds one: Airlock never removes one
     */
    boolean delete(String path);

    /** Creates the directory and its parents; an existing directory is fine. */
    void mkdirs(String dir);

    /** Unpacks a tar stream into {@code dir} (created if needed), keeping modes. */
    void copyIn(String dir, InputStream tar);

    /**
     * Packs the tree under {@code dir} as a tar stream (entries relative to {@code dir}), modes
     * kept. The caller closes the stream.
     *
     * @throws NoSuchPathException when the directory does not exist
     */
    InputStream copyOut(String dir);
}
