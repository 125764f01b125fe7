package dev.airlock.ssh;

import dev.airlock.spi.BulkInputStream;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;

/**
 * One channel output between JSch's session thread and the reader. JSch writes every channel's
 * data from the one thread that reads the connection and reopens the SSH window as soon as a
 * write returns, so a blocking pipe (JSch's own) lets one slow reader stall every channel of the
 * connection. Here a write never waits: bytes queue in memory up to {@link #MEMORY}, then in an
 * unlinked temp file, up to {@code limit}; only past that does the writer wait (the connection
 * stalls, as with plain JSch, and the pool opens new channels elsewhere meanwhile).
 *
 * <p>Memory is a queue of {@link #CHUNK}-byte arrays filled end to end; a chunk the reader has
 * emptied is kept for the next bytes (a few at most), so a stream that the reader keeps up with
 * reuses the same chunks instead of allocating a copy of every packet (256 MiB of output was
 * 256 MiB of garbage, and the young collections it caused cost more than the cipher).
 */
final class ChannelBuffer {
    static final int MEMORY = 1 << 20;
    /** One array of the memory queue: an SSH packet's worth (OpenSSH and JSch send at most 32 KiB). */
    static final int CHUNK = 32 << 10;
    /** Emptied chunks kept for reuse. */
    private static final int SPARES = 4;

    private final long limit;
    /** Full chunks, then the tail chunk filled to {@link #tailLen}; read from {@link #headPos} of the first. */
    private final ArrayDeque<byte[]> memory = new ArrayDeque<>();
    private final ArrayDeque<byte[]> spare = new ArrayDeque<>();
    private int headPos;
    private int tailLen;
    private long memoryBytes;
    private long chunksMade;
    private FileChannel spill;
    private long spillWrite;
    private long spillRead;
    /** Once bytes went to the file, later ones follow them there until the reader caught up. */
    private boolean spilling;
    private boolean eof;
    private boolean readerClosed;
    private boolean writerWaiting;

    ChannelBuffer(long limit) {
        this.limit = Math.max(MEMORY, limit);
    }

    /** What JSch writes to: never blocks below the limit. */
    final OutputStream sink = new OutputStream() {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            put(b, off, len);
        }

        @Override
        public void close() {
            end();
        }
    };

    /** What the core's output pump reads. */
    final InputStream source = new BulkInputStream() {
        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return take(b, off, len);
        }

        @Override
        public void close() {
            closeReader();
        }
    };

    private synchronized void put(byte[] b, int off, int len) throws IOException {
        if (readerClosed || eof || len == 0) {
            return; // nobody will read it: drop, never fail (JSch would close the channel)
        }
        while (buffered() + len > limit && !readerClosed) {
            writerWaiting = true;
            try {
                wait(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while the reader was behind");
            } finally {
                writerWaiting = false;
            }
        }
        if (readerClosed) {
            return;
        }
        if (!spilling && memoryBytes + len <= MEMORY) {
            append(b, off, len);
        } else {
            spilling = true;
            FileChannel f = spillFile();
            ByteBuffer buf = ByteBuffer.wrap(b, off, len);
            while (buf.hasRemaining()) {
                spillWrite += f.write(buf, spillWrite);
            }
        }
        notifyAll();
    }

    private synchronized int take(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        while (buffered() == 0) {
            if (eof || readerClosed) {
                return -1;
            }
            try {
                wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while reading SSH output");
            }
        }
        int n;
        if (memoryBytes > 0) {
            byte[] head = memory.peek();
            int filled = memory.size() == 1 ? tailLen : CHUNK;
            n = Math.min(len, filled - headPos);
            System.arraycopy(head, headPos, b, off, n);
            headPos += n;
            memoryBytes -= n;
            if (headPos == filled) {
                recycle(memory.poll());
                headPos = 0;
                if (memory.isEmpty()) {
                    tailLen = 0;
                }
            }
        } else {
            n = spill.read(ByteBuffer.wrap(b, off, (int) Math.min(len, spillWrite - spillRead)), spillRead);
            spillRead += n;
            if (spillRead == spillWrite) {
                spilling = false; // caught up: memory again, the file is reused from its start
                spillRead = 0;
                spillWrite = 0;
                spill.truncate(0);
            }
        }
        notifyAll();
        return n;
    }

    /** Copies into the tail chunk, then into fresh ones (spares first) as each fills. */
    private void append(byte[] b, int off, int len) {
        while (len > 0) {
            if (memory.isEmpty() || tailLen == CHUNK) {
                memory.add(chunk());
                tailLen = 0;
            }
            int n = Math.min(len, CHUNK - tailLen);
            System.arraycopy(b, off, memory.peekLast(), tailLen, n);
            tailLen += n;
            memoryBytes += n;
            off += n;
            len -= n;
        }
    }

    private byte[] chunk() {
        byte[] c = spare.poll();
        if (c == null) {
            c = new byte[CHUNK];
            chunksMade++;
        }
        return c;
    }

    private void recycle(byte[] c) {
        if (spare.size() < SPARES) {
            spare.push(c);
        }
    }

    /** How many chunks this buffer has allocated: a reader that keeps up needs only a few. */
    synchronized long chunksMade() {
        return chunksMade;
    }

    private long buffered() {
        return memoryBytes + spillWrite - spillRead;
    }

    /** Whether JSch's thread waits on this buffer (the whole connection stalls meanwhile). */
    synchronized boolean writerWaiting() {
        return writerWaiting;
    }

    private synchronized void end() {
        eof = true;
        notifyAll();
    }

    private synchronized void closeReader() {
        readerClosed = true;
        memory.clear();
        spare.clear();
        memoryBytes = 0;
        headPos = 0;
        tailLen = 0;
        if (spill != null) {
            try {
                spill.close();
            } catch (IOException ignored) {
                // the file is already unlinked; closing frees its space
            }
        }
        spillRead = 0;
        spillWrite = 0;
        notifyAll();
    }

    /** Made on first need, 0600, and unlinked at once: its space is freed even if the JVM dies. */
    private FileChannel spillFile() throws IOException {
        if (spill == null) {
            Path p = Files.createTempFile("airlock-ssh-output-", ".buf",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            spill = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE);
            Files.delete(p);
        }
        return spill;
    }
}
