package dev.airlock.cli;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;

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
