package dev.airlock.session;

import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;

/**
 * Execs that carry state over, like commands typed into one terminal: the working directory,
 * exported variables, and on bash also functions and aliases. Made by
 * {@link dev.airlock.Environment#session()}.
 *
 * <pre>{@code
 * try (Environment env = Environments.open(Settings.fromProcess());
 *      var s = env.session()) {
 *     s.exec(ExecRequest.of("cd api && export DEBUG=1"));
 *     s.exec(ExecRequest.of("pytest"));   // runs in api with DEBUG set
 * }
 * }</pre>
 *
 * <p>Execs of one session run one at a time: a second waits for the first to end, or fails at
 * once with {@link SessionBusyException} under {@code airlock.session.wait=false}. Separate
 * sessions and plain execs of the environment stay concurrent. A request's own {@code env} applies
 * to that exec only; a request's {@code cwd} is entered instead of the session's directory (and
 * stays the session's directory afterwards, like a {@code cd}). Variables Airlock injects (its
 * own, the request's, the target's) are never written to the snapshot unless the session changed
 * them; a command that replaces the shell ({@code exec prog}) or sets its own EXIT trap leaves the
 * state as it was before it.
 */
public interface Session extends AutoCloseable {

    /** A unique id for this session within its environment. */
    String id();

    /**
     * Where its state lives on the target: a directory in the environment's private dir holding
     * the snapshot file ({@value SessionScript#SNAPSHOT}, mode 0600), removed when the session or
     * the environment closes.
     */
    String directory();

    /** Runs a command in the session and waits for it; see {@link dev.airlock.Environment#exec}. */
    ExecResult exec(ExecRequest request);

    /**
     * Starts a command in the session; see {@link dev.airlock.Environment#start}. Blocks while
     * another exec of this session runs (or throws {@link SessionBusyException} when
     * {@code airlock.session.wait=false}).
     */
    Execution start(ExecRequest request);

    /**
     * Ends the session once the exec that runs (if any) ended: saves the state to its
     * {@link SessionStore}, if it has one, and removes it from the target. Idempotent.
     */
    @Override
    void close();
}
