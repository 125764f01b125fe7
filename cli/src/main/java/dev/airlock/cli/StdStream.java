package dev.airlock.cli;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Our stdout or stderr, unbuffered (bytes pass straight through). Remembers when the reader went
 * away (EPIPE) and runs a callback, so a command whose output nobody reads is stopped, as
 * SIGPIPE would stop it in a local pipeline.
 */
final class StdStream extends OutputStream {
    private final FileOutputStream out;
    private volatile Runnable onBrokenPipe = () -> { };
    private volatile boolean broken;

    private StdStream(FileDescriptor fd) {
        this.out = new FileOutputStream(fd);
    }

    static StdStream stdout() {
        return new StdStream(FileDescriptor.out);
    }

    static StdStream stderr() {
        return new StdStream(FileDescriptor.err);
    }

    /**
     * Our stdin, or an empty stream when it was closed when we started ({@code airlock write P <&-}):
     * the JVM then opened one of its own files (its {@code lib/modules}) as descriptor 0, and
     * reading that would send those bytes as the input.
     */
    static InputStream stdin() {
        return wasClosed(0) ? InputStream.nullInputStream() : new FileInputStream(FileDescriptor.in);
    }

    /**
     * Whether descriptor {@code fd} was closed when this process started, so the JVM reused it for
     * one of its own files: an inherited descriptor never has close-on-exec set (it would not have
     * survived the exec), and the runtime's files and Airlock's own jar are never the caller's input.
     */
    static boolean wasClosed(int fd) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/fdinfo/" + fd))) {
                if (line.startsWith("flags:") && (Long.parseLong(line.substring(6).trim(), 8) & O_CLOEXEC) != 0) {
                    return true;
                }
            }
            // Java opens its own files without close-on-exec: the runtime's and Airlock's own code are not input.
            Path target = Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd));
            if (target.startsWith(Path.of(System.getProperty("java.home")).toRealPath())) {
                return true;
            }
            java.security.CodeSource own = StdStream.class.getProtectionDomain().getCodeSource();
            return own != null && own.getLocation() != null && target.equals(Path.of(own.getLocation().toURI()).toRealPath());
        } catch (NoSuchFileException e) {
            return true; // still closed
        } catch (IOException | RuntimeException | java.net.URISyntaxException e) {
            // no /proc: trust the descriptor
        }
        return false;
    }

    private static final long O_CLOEXEC = 02000000;

    void onBrokenPipe(Runnable action) {
        this.onBrokenPipe = action;
    }

    boolean isBroken() {
        return broken;
    }

    @Override
    public void write(int b) throws IOException {
        try {
            out.write(b);
        } catch (IOException e) {
            throw failed(e);
        }
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        try {
            out.write(b, off, len);
        } catch (IOException e) {
            throw failed(e);
        }
    }

    private IOException failed(IOException e) {
        if (!broken && "Broken pipe".equals(e.getMessage())) {
            broken = true;
            onBrokenPipe.run();
        }
        return e;
    }

    @Override
    public void close() {
        // The process's own descriptor: never closed by us.
    }
}
