package dev.airlock.emulator;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * A command running in an {@link EmulatedSandbox}: its pipes, its exit status, and a kill of
 * its whole process group. {@link #exitValue()} is the host process's (128+N after signal N, the
 * same as {@code exit 128+N}); {@link #exit()} tells the two apart where the chain has an
 * {@link ExitWaiter} (bubblewrap and unshare isolation). Under gVisor the host process is the
 * {@code runsc exec} client, which reports a signal as 128+N and nothing else sees the status, and
 * the group signalled is the command's inside the container.
 */
public final class SandboxProcess {
    /**
     * How a command ended: exited with {@code value}, or killed by signal {@code value} (never both),
     * as a service's exec wait reports it.
     */
    public record Exit(boolean signalled, int value) {
        public static Exit code(int code) {
            return new Exit(false, code);
        }

        public static Exit signal(int signal) {
            return new Exit(true, signal);
        }

        /** The status a shell would report: the code, or 128+N after signal N. */
        public int shellStatus() {
            return signalled ? 128 + value : value;
        }
    }

    private final Process process;
    private final EmulatedSandbox sandbox;
    private final IntConsumer signalGroup;
    /** Where the chain's {@link ExitWaiter} writes the status; empty when the chain has none (gVisor). */
    private final Optional<Path> statusFile;
    /** The last signal the emulator sent the command's group; 0 for none. */
    private volatile int sent;
    private Exit exit;

    /**
     * A command whose process group on the host is its own (started under {@code setsid}), with an
     * {@link ExitWaiter} writing to {@code statusFile} when there is one.
     */
    SandboxProcess(Process process, EmulatedSandbox sandbox, Optional<Path> statusFile) {
        this.process = process;
        this.sandbox = sandbox;
        this.signalGroup = signal -> ProcessGroups.signal(process.pid(), signal);
        this.statusFile = statusFile;
    }

    /** A command whose group {@code signalGroup} signals (a gVisor command's, inside its container). */
    SandboxProcess(Process process, EmulatedSandbox sandbox, IntConsumer signalGroup) {
        this.process = process;
        this.sandbox = sandbox;
        this.signalGroup = signalGroup;
        this.statusFile = Optional.empty();
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

    /**
     * Waits for the end and says how the command ended: the {@link ExitWaiter}'s status. When the
     * waiter wrote none, the group was SIGKILLed with the waiter in it, which only the emulator
     * can do: the signal it sent; with no waiter (gVisor), the exit value as a code.
     */
    public synchronized Exit exit() throws InterruptedException {
        if (exit == null) {
            int value = process.waitFor();
            Optional<Exit> waited = statusFile.flatMap(ExitWaiter::read);
            exit = waited.orElseGet(() -> statusFile.isPresent() && sent != 0 ? Exit.signal(sent) : Exit.code(value));
            statusFile.ifPresent(SandboxProcess::delete);
        }
        return exit;
    }

    private static void delete(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // beside the sandbox root: removed with it at close
        }
    }

    /** Sends {@code signal} (15, 9...) to the command's process group. */
    public void signal(int signal) {
        sent = signal;
        signalGroup.accept(signal);
    }

    Process process() {
        return process;
    }

    EmulatedSandbox sandbox() {
        return sandbox;
    }
}
