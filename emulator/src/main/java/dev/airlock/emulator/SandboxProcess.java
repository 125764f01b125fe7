package dev.airlock.emulator;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * A command running in an {@link EmulatedSandbox}: its pipes, its exit status, and a kill of
 * its whole process group. The exit status is the process's own (128+N after signal N). Under
 * gVisor the host process is the {@code runsc exec} client, and the group signalled is the
 * command's inside the container.
 */
public final class SandboxProcess {
    private final Process process;
    private final EmulatedSandbox sandbox;
    private final IntConsumer signalGroup;

    /** A command whose process group on the host is its own (started under {@code setsid}). */
    SandboxProcess(Process process, EmulatedSandbox sandbox) {
        this(process, sandbox, signal -> ProcessGroups.signal(process.pid(), signal));
    }

    /** A command whose group {@code signalGroup} signals (a gVisor command's, inside its container). */
    SandboxProcess(Process process, EmulatedSandbox sandbox, IntConsumer signalGroup) {
        this.process = process;
        this.sandbox = sandbox;
        this.signalGroup = signalGroup;
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

    /** The host process group (the leader started under {@code setsid}, so its pid). */
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
        signalGroup.accept(signal);
    }

    Process process() {
        return process;
    }

    EmulatedSandbox sandbox() {
        return sandbox;
    }
}
