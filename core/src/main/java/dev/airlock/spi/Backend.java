package dev.airlock.spi;

import dev.airlock.Capabilities;
import dev.airlock.RemoteFiles;
import dev.airlock.Target;
import dev.airlock.containment.Containment;

import java.io.IOException;
import java.util.Optional;
import java.util.Set;

/**
 * What a plugin implements: transport only. The core owns the whole exec flow (the target probe,
 * containment, the children's environment, stdin by mode, staging, the state machine, timeouts,
 * cancel, kill, output capture and the shell implementation of file operations) and calls these
 * hooks. A provider opens an environment with {@link OpenContext#open(Backend)}.
 *
 * <p>Every hook that may block gets a {@link Deadline}; the core interrupts a hook still running
 * at its deadline, so a hook must return (or throw {@link java.io.InterruptedIOException}) when
 * interrupted. The optional parts ({@link #stager()}, {@link #killer()}, {@link #files()}) replace
 * the core's shell implementations where the backend has better means.
 */
public interface Backend extends AutoCloseable {

    /** The backend's name, as users choose it ({@code airlock.backend}). */
    String name();

    /** This sandbox's id (a container id, a host name), unique enough to tell environments apart in logs. */
    String id();

    /**
     * Where commands run, as messages name it when the connection there is lost ({@code user@host:port}
     * for ssh); the backend's {@link #name()} by default.
     */
    default String destination() {
        return name();
    }

    /** What the backend does natively: stdin mode, env transport, argv limit, output transport. */
    Capabilities capabilities();

    /**
     * Starts {@code launch.shell() -c launch.script()} on the target in a process group of its own
     * (under {@code setsid}, so a kill of the group reaches the whole tree) and returns at once,
     * with the command's streams; the core writes stdin, drains both outputs and waits.
     * With native env, {@code launch.env()} is set and {@code launch.unset()} removed for it.
     * Throw an {@link IOException} when the command did not start, or
     * {@link dev.airlock.DispatchOutcomeUnknownException} when whether it started is unknown: the
     * core never sends it again.
     */
    RemoteProcess launch(Launch launch, Deadline deadline) throws IOException;

    /**
     * Stops the sandbox: called exactly once, by close or a sandbox-wide cancel, after every exec
     * ended. An attached sandbox (one the user keeps) must be left running. Failures are logged.
     */
    default void stopSandbox(Deadline deadline) {
    }

    /**
     * Saves the sandbox's files (never the core's private dir, {@code privateDir}) and returns an
     * id that {@code airlock.NAME.snapshot=ID} opens from. Called only when {@link Capabilities#snapshots()}
     * is true; the core refuses in one line otherwise, so the default is never reached.
     */
    default String snapshot(String privateDir, Deadline deadline) throws IOException {
        throw new UnsupportedOperationException(name() + " declares snapshots but does not implement Backend.snapshot");
    }

    /** Frees the backend's clients; called once, after {@link #stopSandbox}. */
    @Override
    default void close() {
    }

    /**
     * Receives the core's services for this backend ({@link CoreAccess}): called once, when the
     * environment is made and before the target probe. Keep it to use them later.
     */
    default void bind(CoreAccess core) {
    }

    /**
     * A shell kept running on the target ({@link ControlShell}) for the core's group reads and
     * signals, staged-file removals, small staged text and the guard's path resolutions (taken
     * only as {@link ControlShell#runWhole whole answers}), where a new command is slow to start
     * (a docker exec under load, an ssh login reading startup files): each of those steps then
     * costs a line each way. The core asks at each step and runs the step as a command when it is
     * empty, dead or fails. The core closes it before {@link #stopSandbox}. Empty by default.
     *
     * <p>It must run where commands run, as their user, with their view of the filesystem (the same
     * container, host and mounts): the guard judges a path by what this shell resolves it to, so a
     * shell outside a sandbox's mounts would judge paths the commands never see.
     */
    default Optional<ControlShell> controlShell() {
        return Optional.empty();
    }

    /** A native upload and delete; empty to let the core stage through {@code cat}. */
    default Optional<Stager> stager() {
        return Optional.empty();
    }

    /**
     * How long one step of a kill (a group read, or a signal) may take on this backend: several
     * remote calls on a cloud sandbox, where the core's kill scripts each start a command. A stop
     * waits the kill grace and slack plus four such steps (read and SIGTERM, read and SIGKILL)
     * before the caller gets its result without the kill: a kill that is merely slow then ends
     * the exec itself, with its tree gone and all of its output downloaded. Zero (the default)
     * for a backend whose kill is one local call or one round trip.
     */
    default java.time.Duration killStepCost() {
        return java.time.Duration.ZERO;
    }

    /**
     * How a port of the sandbox is reached from this machine, for a backend whose
     * {@link dev.airlock.Capabilities#ports()} is not {@code NONE} (required then); empty by default.
     */
    default Optional<PortForwarder> portForwarder() {
        return Optional.empty();
    }

    /** A native kill and group read; empty to let the core signal the process group with scripts. */
    default Optional<Killer> killer() {
        return Optional.empty();
    }

    /**
     * The streamed-stdin writer of a {@link dev.airlock.StdinMode#PAYLOAD} backend that declares
     * {@link dev.airlock.PayloadStrategy#STREAMED}; required then.
     */
    default Optional<StdinWriter> stdinWriter() {
        return Optional.empty();
    }

    /**
     * A native file API, used behind the same write rules instead of the core's shell
     * implementation. Required with {@link dev.airlock.OutputTransport#FILES}: the core downloads
     * the output files through its {@code read} and {@code stat}. Closing the environment ends a
     * {@code write} or {@code copyIn} in flight by failing its next read of the content with an
     * {@link java.io.IOException}: remove your temp file then and never rename it over the target.
     */
    default Optional<RemoteFiles> files() {
        return Optional.empty();
    }

    /**
     * Where the private dir is made on the target, as a shell expression; empty for the core's
     * default ({@code airlock.private-dir.base}, else {@code ${TMPDIR:-/tmp}}).
     */
    default Optional<String> privateDirBase() {
        return Optional.empty();
    }

    /**
     * The target probe answered without its script: the very NUL-separated records
     * {@link dev.airlock.containment.TargetProbe#script} would print when run through {@link #launch}
     * with {@code unset} removed from the environment, its private dir made under
     * {@code privateDirBase} (a shell expression). Empty, the default and wherever the answer could
     * differ, runs the script. A backend whose target is this very host saves the script's processes.
     * Like every hook it has a deadline; the core interrupts it there and runs the script instead.
     */
    default Optional<byte[]> probe(String privateDirBase, Set<String> unset, Deadline deadline) {
        return Optional.empty();
    }

    /**
     * Makes the children's profile home as {@code umask 077; mkdir -p -- HOME} would, without a
     * script; false, the default and wherever the result could differ, runs the script.
     */
    default boolean makeHome(String home, Deadline deadline) {
        return false;
    }

    /**
     * The directory Airlock's own scripts start in, when they run on this very host and see its
     * file system as this JVM does (the same path names the same file, links and all) with this
     * JVM's environment (less what {@link #childUnset} removes, under native env): the safety rules
     * then answer the path resolution they run before every write and delete in-process, with the
     * answers its script would print ({@link dev.airlock.safety.HostPaths}), and start no process
     * for it. A sandbox that shows this host's files at other places says where with
     * {@link #hostPlace}. Empty, the default, runs the script. Asked at each resolution: the answer
     * may change once the target is ready.
     */
    default Optional<java.nio.file.Path> hostView() {
        return Optional.empty();
    }

    /**
     * Under {@link #hostView}: where a path Airlock's scripts name lies on this host, or empty
     * where this host cannot tell what they see there (the script then answers). The path is
     * absolute and normal, with no link before its last name; the answer must not follow one
     * either. By default the same path: the scripts see this host's files as this JVM does. A
     * sandbox answers from its mounts (a directory of its own bound over {@code /tmp}, say).
     */
    default Optional<java.nio.file.Path> hostPlace(java.nio.file.Path path) {
        return Optional.of(path);
    }

    /**
     * Removes the private dir at close as {@code rm -rf} would, without a script; false, the
     * default and whenever something is left, runs {@code rm -rf}.
     */
    default boolean removePrivateDir(String dir, Deadline deadline) {
        return false;
    }

    /**
     * Called once when the target is probed and the children's home, temp dir and shims exist: a
     * backend that isolates its commands sets that up here and launches everything after it so.
     */
    default void onTargetReady(Target target, Containment containment) {
    }

    /** How commands are isolated beyond their environment, in one line for {@code doctor}. */
    default String isolation() {
        return "none";
    }

    /**
     * Under {@code airlock.network=allowlist}, what a check made from outside the commands' reach
     * found, in one line for {@code doctor}: a destination the list does not name, where this side
     * listened, that a connection from inside the sandbox did not reach. Empty when no such check
     * ran; {@code doctor} then calls the allowlist nothing it could verify. A backend says so only
     * for a filter a command cannot change (rules in a namespace it holds no capability over).
     */
    default java.util.Optional<String> allowlistCheck() {
        return java.util.Optional.empty();
    }

    /**
     * True when the transport's output tells nothing of what a command left running: it ends when
     * the command itself exits, or the daemon keeps it open after the exit only for a drain time
     * of its own (Docker's exec streams), or it is files read after the exit (Vercel). The core
     * then reads the command's process group after every exit (one group read, where it is gone)
     * and ends what is left, instead of giving every process of the command a copy of the output
     * (which there would only hold the end back). False by default: the output stays open while
     * any process of the command holds it, and a held output is how the core sees a job was left.
     */
    default boolean outputEndsAtExit() {
        return false;
    }

    /**
     * Whether the kernel keeps every protected home's credential directories read-only for
     * commands (bubblewrap's read-only binds), whatever a command does. The guard then holds
     * {@code ~/.ssh/config} to that rule for every tool: an approval could not make it writable
     * for a command, so the file API does not write it either. False by default.
     */
    default boolean credentialsReadOnly() {
        return false;
    }

    /**
     * The variables removed from what a child inherits, given the core's proposal (the JVM's
     * secrets and containment's list). A sandbox that never sees the JVM's environment returns none.
     */
    default Set<String> childUnset(Set<String> proposed) {
        return proposed;
    }
}
