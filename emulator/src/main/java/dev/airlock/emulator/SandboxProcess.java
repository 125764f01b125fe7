package dev.airlock.emulator;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.TimeUnit;

/**
 * A command running in an {@link EmulatedSandbox}: its pipes, its exit status, and a kill of
 * its whole process group. The exit status is the process's own (128+N after signal N).
 */
public final class SandboxProcess {
    private final Process process;
    private final EmulatedSandbox sandbox;

    SandboxProcess(Process process, EmulatedSandbox sandbox) {
        this.process = process;
        this.sandbox = sandbox;
    }

    public OutputStream stdin() {
        return process.getOutputStream();
    }

    public InputStream stdout() {
        return process.getInputStream();
    }

    public InputStream stderr() {
        return process.getErrorStream();
    }

    /** The process group (the leader started under {@code setsid}, so its pid). */
    public long pgid() {
        return process.pid();
    }

    public int waitFor() throws InterruptedException {
        return process.waitFor();
    }

    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
        return process.waitFor(timeout, unit);
    }

    public boolean alive() {
        return process.isAlive();
    }

    public int exitValue() {
        return process.exitValue();
    }

    /** Sends {@code signal} (15, 9...) to the command's process group. */
    public void signal(int signal) {
        ProcessGroups.signal(pgid(), signal);
    }

    Process process() {
        return process;
    }

    EmulatedSandbox sandbox() {
        return sandbox;
    }
}
