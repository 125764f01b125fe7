package dev.airlock.exec;

import dev.airlock.spi.RemoteProcess;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.OptionalLong;

/** A backend's process, passed through; a test overrides what its backend reports differently. */
class DelegatingProcess implements RemoteProcess {
    private final RemoteProcess p;

    DelegatingProcess(RemoteProcess p) {
        this.p = p;
    }

    @Override
    public OutputStream stdin() {
        return p.stdin();
    }

    @Override
    public InputStream stdout() {
        return p.stdout();
    }

    @Override
    public InputStream stderr() {
        return p.stderr();
    }

    @Override
    public int waitFor() throws InterruptedException {
        return p.waitFor();
    }

    @Override
    public OptionalLong processGroup() {
        return p.processGroup();
    }

    @Override
    public OptionalLong startTime() {
        return p.startTime();
    }

    @Override
    public boolean hasSurvivors(OptionalLong group) {
        return p.hasSurvivors(group);
    }

    @Override
    public void release() {
        p.release();
    }
}
