package dev.airlock;

import dev.airlock.session.Session;
import dev.airlock.session.SessionStore;

/**
 * A place to run an agent's commands and file operations: the local host, a container, an SSH
 * host or a cloud sandbox. Safe for concurrent use. Close it to kill what still runs, remove
 * everything Airlock staged, and stop the sandbox (once).
 *
 * <pre>{@code
 * try (Environment env = Environments.open(Settings.fromProcess())) {
 *     ExecResult r = env.exec(ExecRequest.of("uname -a"));
 *     System.out.print(r.stdout().text());
 * }
 * }</pre>
 */
public interface Environment extends AutoCloseable {

    /** A unique id for this environment (for a sandbox: the sandbox id, usable to attach). */
    String id();

    /** The backend's name, e.g. {@code local}, {@code docker}. */
    String name();

    /** The probed target machine. */
    Target target();

    Capabilities capabilities();

    /** Runs a command and waits for it. Interrupting the calling thread cancels the command. */
    ExecResult exec(ExecRequest request);

    /** Runs a shell command with the request's defaults (no stdin, no timeout) and waits for it. */
    default ExecResult exec(String command) {
        return exec(ExecRequest.of(command));
    }

    /** Starts a command and returns at once, before staging begins; see {@link Execution}. */
    Execution start(ExecRequest request);

    RemoteFiles files();

    /**
     * A new shell session: execs that share the working directory, exported variables and, on
     * bash, functions and aliases, one at a time. See {@link Session}.
     */
    Session session();

    /** A session whose state is loaded from {@code store} now and saved to it when the session closes. */
    Session session(SessionStore store);

    /**
     * The sandbox's ports, reachable from this machine by URI; see {@link Ports}. What a backend can
     * expose is in {@link Capabilities#ports()}; every forward ends when the environment closes.
     */
    Ports ports();

    /**
     * Saves the sandbox's filesystem as it is now and returns an id; opening with
     * {@code airlock.BACKEND.snapshot=ID} (e.g. {@code airlock.docker.snapshot}) starts a new
     * sandbox with these files, bytes and modes. It captures files only: no running process, no
     * open connection, and never Airlock's private dir (staged files, sessions, the children's
     * TMPDIR). This environment carries on unchanged. Each backend's notes say what else stays
     * out (docs/backends.md, Snapshots).
     *
     * @throws ConfigurationException in one line naming the backend when its
     *         {@link Capabilities#snapshots()} is false (local and ssh: there is no sandbox to save)
     */
    String snapshot();

    /** Kills running commands, removes staged and output files, stops the sandbox once. Idempotent. */
    @Override
    void close();
}
