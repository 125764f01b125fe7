package dev.airlock.spi;

import dev.airlock.Capabilities;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.Target;
import dev.airlock.containment.ContainedEnvironment;
import dev.airlock.containment.Containment;
import dev.airlock.exec.CoreEnvironment;
import dev.airlock.exec.CoreSettings;
import dev.airlock.safety.GuardMode;
import dev.airlock.settings.Settings;
import dev.airlock.shell.Shell;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * A backend written as a subclass: it supplies hooks ({@link #launch} required; {@link #stage},
 * {@link #removeStaged}, {@link #kill}, {@link #groupState}, {@link #stopSandbox},
 * {@link #nativeFiles} where it has better means) and this adapter turns them into a
 * {@link Backend} run by the core's one composed environment, to which every
 * {@link dev.airlock.Environment} method delegates. New backends may implement {@link Backend}
 * directly instead and open it with {@link OpenContext#open(Backend)}.
 *
 * <p>A subclass constructor calls {@code super(...)}, sets up its client, then calls
 * {@link #initialize()} as its last step (or the provider calls it right after construction).
 */
public abstract class AbstractEnvironment implements ContainedEnvironment {
    public static final String CANCEL_KEY = CoreSettings.CANCEL_KEY;
    public static final String OUTPUT_MAX_KEY = CoreSettings.OUTPUT_MAX_KEY;
    public static final String KILL_GRACE_KEY = CoreSettings.KILL_GRACE_KEY;
    public static final String MAX_STAGED_KEY = CoreSettings.MAX_STAGED_KEY;
    public static final String OUTPUT_GRACE_KEY = CoreSettings.OUTPUT_GRACE_KEY;
    public static final String AUDIT_FILE_KEY = CoreSettings.AUDIT_FILE_KEY;

    private static final Logger LOG = LoggerFactory.getLogger(AbstractEnvironment.class);

    protected final OpenContext context;
    protected final Settings settings;
    private final CoreEnvironment core;
    private volatile ControlShell control;

    protected AbstractEnvironment(String backend, String id, OpenContext context) {
        this.context = context;
        this.settings = context.settings();
        this.core = CoreEnvironment.create(new SubclassBackend(this, backend, id), context);
    }

    // ---------------------------------------------------------------- hooks

    /**
     * Starts {@code launch.shell() -c launch.script()} on the target, in a process group of its
     * own, and returns at once. The core streams stdin when {@link Launch#pipeStdin()}, drains
     * both outputs and waits. Throw an {@link IOException} when the command could not be started
     * (it did not run), or a {@link dev.airlock.DispatchOutcomeUnknownException} when whether it
     * started is unknown.
     */
    protected abstract RemoteProcess launch(Launch launch) throws IOException;

    /** What the backend does natively. */
    @Override
    public abstract Capabilities capabilities();

    /**
     * Puts {@code data} at {@code path} on the target with mode 0600 (for PAYLOAD stdin, staged
     * env and scripts). The default writes small text (the staged env, a long command's script)
     * through the {@link #useControlShell control shell} while it lives, which costs a line each
     * way instead of a new command (on ssh a login per exec); anything else, or when the shell
     * fails, goes through {@code cat} with the backend's stdin pipe.
     */
    protected void stage(String path, Payload data) throws IOException {
        Optional<String> text = ControlShell.carriableText(data);
        if (text.isPresent() && "ok\n".equals(inControl(Shell.stageTextScript(path, text.get())))) {
            return;
        }
        RawResult r = runRaw(Shell.stageScript(path), data);
        if (r.exit() != 0) {
            throw new IOException("cat exited " + r.exit() + ": " + r.stderrLine());
        }
    }

    /**
     * Removes a staged path; the default runs {@code rm -f}, through the {@link #useControlShell
     * control shell} while it lives. Must not fail when it is already gone.
     */
    protected void removeStaged(String path) throws IOException {
        if (!"ok\n".equals(inControl(Shell.removeScript(path) + "[ ! -e " + Shell.quotePath(path) + " ] && echo ok\n"))) {
            runRaw(Shell.removeScript(path), null);
        }
    }

    /**
     * Signals an exec's whole process tree: SIGTERM first ({@code force=false}), SIGKILL after
     * the grace period. {@code pgid} is the command's process group, from the backend or from the
     * launcher record, already checked against its leader's start time; empty when neither knows
     * it (then only a native kill can help). The default signals the group through the
     * {@link #useControlShell control shell} while it lives, else in a second exec.
     */
    protected void kill(RemoteProcess process, OptionalLong group, boolean force) throws IOException {
        long pgid = group.orElseThrow(() -> new IOException(
                "the command's process group is unknown and the backend has no native kill"));
        String script = Shell.signalGroupScript(force ? "KILL" : "TERM", pgid);
        if (inControl(script) == null) {
            runRaw(script, null);
        }
    }

    /**
     * Reads a process group right before the core signals it: whether it has members, and its
     * leader's start time. The default asks the target with builtins and {@code /proc}, through
     * the {@link #useControlShell control shell} while it lives; a backend whose commands run in
     * another pid namespace than its scripts overrides it.
     */
    protected GroupState groupState(long pgid) throws IOException {
        String out = inControl(Shell.groupStateScript(pgid));
        if (out != null) {
            return GroupState.parse(out);
        }
        RawResult r = runRaw(Shell.groupStateScript(pgid), null);
        return GroupState.parse(new String(r.stdout(), StandardCharsets.UTF_8));
    }

    /** Stops the sandbox (called once, by close or a sandbox-wide cancel). Attached sandboxes must be left running. */
    protected void stopSandbox() {
    }

    /**
     * A backend's own file API, used instead of the shell implementation where present; required
     * with {@link dev.airlock.OutputTransport#FILES} (the output files are downloaded through it).
     */
    protected Optional<RemoteFiles> nativeFiles() {
        return Optional.empty();
    }

    /**
     * The streamed-stdin writer, for a PAYLOAD backend that declares
     * {@link dev.airlock.PayloadStrategy#STREAMED} (required then); empty by default.
     */
    protected Optional<StdinWriter> stdinWriter() {
        return Optional.empty();
    }

    /**
     * Where the private dir is made on the target: a shell expression, by default {@code ${TMPDIR:-/tmp}}.
     * The eval profile overrides it with {@code RUN_DIR/tmp}, so nothing lands in the shared temp dir.
     */
    protected String privateDirBase() {
        return core.defaultPrivateDirBase();
    }

    /** The target probe answered without its script, as {@link Backend#probe}; empty by default (the script runs). */
    protected Optional<byte[]> probe(String privateDirBase, Set<String> unset) {
        return Optional.empty();
    }

    /** The profile home made without a script, as {@link Backend#makeHome}; false by default (the script runs). */
    protected boolean makeHome(String home) {
        return false;
    }

    /** The private dir removed without a script, as {@link Backend#removePrivateDir}; false by default ({@code rm -rf} runs). */
    protected boolean removePrivateDir(String dir) {
        return false;
    }

    /**
     * Called once at the end of {@link #initialize()}, when the target is probed and the children's
     * home, temp dir and shims exist: a backend that isolates its commands (bubblewrap, say) sets
     * that up here, and launches everything after it isolated. The probe and the setup before it
     * run as launched.
     */
    protected void onTargetReady(Target target, Containment containment) {
    }

    /** {@link Backend#killStepCost}: zero by default, for a kill that is one local call or one round trip. */
    protected java.time.Duration killStepCost() {
        return java.time.Duration.ZERO;
    }

    /** How commands are isolated beyond their environment, in one line for {@code doctor}; "none" by default. */
    @Override
    public String isolation() {
        return "none";
    }

    /** {@link Backend#credentialsReadOnly}: false by default. */
    protected boolean credentialsReadOnly() {
        return false;
    }

    /**
     * Variables to remove from what the child inherits: the secrets among the JVM's variables (a
     * child of a native-env backend inherits them) and the containment's list (the eval profile
     * drops the user bus). Backends with native env remove them in {@link #launch}; for the others
     * the staged env script unsets them.
     */
    protected Set<String> childUnset() {
        return core.defaultChildUnset();
    }

    // ---------------------------------------------------------------- for subclasses

    /** Probes the target and creates the private dir; call once, as the last step of construction. */
    protected final void initialize() {
        core.initialize();
    }

    /**
     * Runs a small internal {@code sh} script directly through {@link #launch}, streaming
     * {@code stdin} if given. For the probe, staging, removal and kill; output is capped at 1 MiB.
     */
    protected final RawResult runRaw(String script, Payload stdin) throws IOException {
        return core.runRaw(script, stdin);
    }

    /**
     * Hands the default {@link #kill}, {@link #groupState} and {@link #removeStaged} a shell kept
     * running on the target, so each of their steps is a line each way instead of a new command
     * (which some backends start slowly: a docker exec under load, an ssh login reading startup
     * files). Once it dies (a command may kill it) they run their scripts as commands again. It is
     * closed before {@link #stopSandbox}.
     */
    protected final void useControlShell(ControlShell shell) {
        this.control = shell;
    }

    /** {@code script}'s output from the control shell; null when there is none or it failed (then a command runs it). */
    private String inControl(String script) {
        ControlShell c = control;
        if (c == null || c.dead()) {
            return null;
        }
        try {
            return c.run(script);
        } catch (IOException e) {
            LOG.debug("the control shell of {} failed ({}); its scripts run as commands", id(), e.getMessage());
            return null;
        }
    }

    /** Ends the control shell, if any: the sandbox is about to stop. */
    final void closeControlShell() {
        ControlShell c = control;
        if (c != null) {
            c.close();
        }
    }

    /** Reports an audit event to every listener. */
    protected final void emit(String type, String subject, Map<String, Object> fields) {
        core.emit(type, subject, fields);
    }

    // ---------------------------------------------------------------- the environment, by the core

    @Override
    public final String id() {
        return core.id();
    }

    @Override
    public final String name() {
        return core.name();
    }

    /** Where commands run, for messages ({@link Backend#destination()}); the backend's name unless overridden. */
    public String destination() {
        return name();
    }

    @Override
    public final Target target() {
        return core.target();
    }

    @Override
    public final Containment containment() {
        return core.containment();
    }

    @Override
    public RemoteFiles files() {
        return core.files();
    }

    @Override
    public final ExecResult exec(ExecRequest request) {
        return core.exec(request);
    }

    @Override
    public final Execution start(ExecRequest request) {
        return core.start(request);
    }

    @Override
    public final dev.airlock.session.Session session() {
        return core.session();
    }

    @Override
    public final dev.airlock.session.Session session(dev.airlock.session.SessionStore store) {
        return core.session(store);
    }

    public boolean isClosed() {
        return core.isClosed();
    }

    @Override
    public final void close() {
        core.close();
    }

    @Override
    public final GuardMode.Verdict commandGuard() {
        return core.commandGuard();
    }

    @Override
    public final Set<String> strippedSecretVariables() {
        return core.strippedSecretVariables();
    }
}
