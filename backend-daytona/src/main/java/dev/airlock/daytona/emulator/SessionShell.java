package dev.airlock.daytona.emulator;

import dev.airlock.emulator.EmulatedSandbox;
import dev.airlock.emulator.SandboxProcess;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One toolbox session as the Daytona daemon keeps it: a single long-lived shell in the sandbox,
 * its own process group, fed each command on its stdin. Commands run in it one after the other,
 * in the shell itself, so what one does to the shell ({@code export}, {@code cd}, functions) is
 * there for the next. Each command's stdin is a FIFO of its own, held open by a writer that
 * never writes, so a command that reads waits for {@link #input} instead of seeing end-of-file;
 * its stdout and stderr go to files, read while it runs; the shell reports its exit status on
 * its own stdout. A command that ends the shell ({@code exit}, {@code exec}) ends the session's
 * shell, as on the daemon; commands left without a status then take the shell's.
 */
final class SessionShell {
    /** The line the shell prints after each command: this word, the command id, its status. */
    private static final String DONE = "airlock-session-command-done";

    /** A command of the session: its text, its files in the sandbox, its exit status once it ended. */
    static final class Command {
        final String id;
        final String text;
        final boolean echoInput;
        final CompletableFuture<Integer> exit = new CompletableFuture<>();
        private final String dir;

        private Command(String id, String text, boolean echoInput, String dir) {
            this.id = id;
            this.text = text;
            this.echoInput = echoInput;
            this.dir = dir;
        }
    }

    final String id;
    private final EmulatedSandbox sandbox;
    private final SandboxProcess shell;
    /** The sandbox dir of this session's command files (the daemon keeps them in a dir of its own too). */
    private final String dir;
    private final Map<String, Command> commands = Collections.synchronizedMap(new LinkedHashMap<>());

    private SessionShell(String id, EmulatedSandbox sandbox, SandboxProcess shell, String dir) {
        this.id = id;
        this.sandbox = sandbox;
        this.shell = shell;
        this.dir = dir;
    }

    /** Starts the session's shell ({@code shell} already running in the sandbox, reading commands on its stdin). */
    static SessionShell start(String id, EmulatedSandbox sandbox, SandboxProcess shell) {
        SessionShell s = new SessionShell(id, sandbox, shell, "/tmp/.daytona-sessions/" + UUID.randomUUID());
        daemon("airlock-session-status", s::readStatuses);
        daemon("airlock-session-stderr", () -> discard(shell.stderr()));
        return s;
    }

    /** Hands {@code text} to the shell as the next command; it runs once the ones before it ended. */
    Command submit(String text, boolean echoInput) throws IOException {
        String cmdId = UUID.randomUUID().toString();
        if (!shell.alive()) {
            throw new IOException("the session's shell has ended (exit " + shell.exitValue() + ")");
        }
        Command c = new Command(cmdId, text, echoInput, dir + "/" + cmdId);
        commands.put(cmdId, c);
        String d = "'" + c.dir + "'";
        // The command's text on lines of its own, so a trailing comment or '&' stays the command's.
        // Its stdin is named "in" only once both ends are open (the holder's and the command's), so
        // input written as soon as the name is there waits in the pipe for the command to read it.
        String wrapper = String.join("\n",
                "if mkdir -p " + d + " && mkfifo " + d + "/fifo && : >" + d + "/out && : >" + d + "/err; then",
                "sleep infinity >" + d + "/fifo &",
                "airlock_input_holder=$!",
                "{ ln " + d + "/fifo " + d + "/in 2>/dev/null",
                text,
                "} <" + d + "/fifo >>" + d + "/out 2>>" + d + "/err",
                "printf '" + DONE + " %s %s\\n' " + cmdId + " \"$?\"",
                "kill \"$airlock_input_holder\" 2>/dev/null; unset airlock_input_holder",
                "else printf '" + DONE + " %s 1\\n' " + cmdId + "; fi",
                "");
        OutputStream in = shell.stdin();
        synchronized (in) {
            try {
                in.write(wrapper.getBytes(StandardCharsets.UTF_8));
                in.flush();
            } catch (IOException e) {
                commands.remove(cmdId);
                throw new IOException("the session's shell has ended", e);
            }
        }
        return c;
    }

    Optional<Command> command(String cmdId) {
        return Optional.ofNullable(commands.get(cmdId));
    }

    List<Command> commands() {
        synchronized (commands) {
            return new ArrayList<>(commands.values());
        }
    }

    /** What the command wrote to stdout so far (with the input echoed, unless the client suppressed that). */
    byte[] stdout(Command c) throws IOException {
        return read(c.dir + "/out");
    }

    byte[] stderr(Command c) throws IOException {
        return read(c.dir + "/err");
    }

    /**
     * Writes {@code data} to the running command's stdin, a newline added when it has none (so
     * a {@code read} returns), echoed to its stdout first unless the client asked not to. The
     * shell makes the command's stdin as the command starts: input sent before that waits for it
     * up to 10 s (the daemon would fail at once, but its shell starts faster than this one), then
     * fails as the daemon does, with no such file.
     */
    void input(Command c, String data) throws IOException {
        byte[] line = (data.endsWith("\n") ? data : data + "\n").getBytes(StandardCharsets.UTF_8);
        Path fifo = sandbox.resolve(c.dir + "/in").host();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!Files.exists(fifo) && !c.exit.isDone() && System.nanoTime() < until) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
        if (c.echoInput) {
            try (FileChannel out = FileChannel.open(sandbox.resolve(c.dir + "/out").host(), StandardOpenOption.APPEND)) {
                out.write(ByteBuffer.wrap(line));
            }
        }
        // Read and write, so the open never waits for a reader (a FIFO opened write-only would).
        try (FileChannel in = FileChannel.open(fifo, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            in.write(ByteBuffer.wrap(line));
        }
    }

    /** The shell's process group: the shell and every command it runs, as the daemon's kill takes it. */
    SandboxProcess shell() {
        return shell;
    }

    /** Removes the session's command files, once its shell was killed. */
    void removeFiles() throws IOException {
        sandbox.delete(dir, true);
    }

    private byte[] read(String path) throws IOException {
        try (InputStream in = sandbox.read(path)) {
            return in.readNBytes(16 << 20); // logs are kept up to 16 MiB
        } catch (NoSuchFileException e) {
            return new byte[0]; // not started yet: the commands before it are still running
        }
    }

    private void readStatuses() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(shell.stdout(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                String[] f = line.split(" ");
                if (f.length == 3 && f[0].equals(DONE) && commands.containsKey(f[1])) {
                    commands.get(f[1]).exit.complete(Integer.parseInt(f[2]));
                }
            }
        } catch (IOException | NumberFormatException ignored) {
            // the shell ended
        }
        int code;
        try {
            code = shell.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            code = -1;
        }
        for (Command c : commands()) {
            c.exit.complete(code);
        }
    }

    private static void daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    private static void discard(InputStream in) {
        try (in) {
            in.transferTo(OutputStream.nullOutputStream());
        } catch (IOException ignored) {
            // the shell ended
        }
    }
}
