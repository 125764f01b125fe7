package dev.airlock.vercel.emulator;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A command's log entries (a stream's name and a chunk of its text, as {@code cmd/logs} serves
 * them), on disk rather than in the heap: Vercel keeps a command's logs for the session's life
 * and a client may read them from the start at any time, so a command that prints gigabytes
 * must not keep them in the emulator's memory. In memory there is one offset per entry. Not
 * thread-safe: its command guards it.
 */
final class CommandLog {
    private final Path file;
    private final RandomAccessFile data;
    private long[] offsets = new long[64];
    private int count;
    private long size;
    private boolean deleted;

    CommandLog(Path dir) {
        try {
            Files.createDirectories(dir);
            this.file = Files.createTempFile(dir, "cmd-", ".log");
            this.data = new RandomAccessFile(file.toFile(), "rw");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a command log in " + dir, e);
        }
    }

    int size() {
        return count;
    }

    /** Appends an entry: {@code stream} ("stdout" or "stderr") and its text. Dropped once the log is deleted. */
    void add(String stream, String text) {
        if (deleted) {
            return;
        }
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        try {
            data.seek(size);
            data.writeByte(stream.equals("stderr") ? 2 : 1);
            data.writeInt(b.length);
            data.write(b);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (count == offsets.length) {
            offsets = Arrays.copyOf(offsets, count * 2);
        }
        offsets[count++] = size;
        size += 5 + b.length;
    }

    /** Entry {@code index} ({@code < size()}) as {@code {stream, text}}. */
    String[] get(int index) {
        if (index >= count || deleted) {
            throw new IndexOutOfBoundsException(index);
        }
        try {
            data.seek(offsets[index]);
            String stream = data.readByte() == 2 ? "stderr" : "stdout";
            byte[] b = new byte[data.readInt()];
            data.readFully(b);
            return new String[] {stream, new String(b, StandardCharsets.UTF_8)};
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Frees the file: its session stopped, and the logs went with it. */
    void delete() {
        if (deleted) {
            return;
        }
        deleted = true;
        offsets = new long[0];
        count = 0;
        try {
            data.close();
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // best effort: the state dir goes with the emulator
        }
    }
}
