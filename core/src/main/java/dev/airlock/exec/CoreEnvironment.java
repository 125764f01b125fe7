package dev.airlock.exec;

import dev.airlock.spi.RemoteProcess;
import dev.airlock.BackendException;
import dev.airlock.Capabilities;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.PayloadStrategy;
import dev.airlock.RemoteFiles;
import dev.airlock.StdinMode;
import dev.airlock.Target;
import dev.airlock.containment.ContainedEnvironment;
import dev.airlock.containment.Containment;
import dev.airlock.containment.ContainmentSettings;
import dev.airlock.containment.OwnState;
import dev.airlock.containment.StateWitness;
import dev.airlock.event.ExecTransition;
import dev.airlock.safety.GuardMode;
import dev.airlock.session.Session;
import dev.airlock.session.SessionHook;
import dev.airlock.session.SessionStore;
import dev.airlock.session.ShellSession;
import dev.airlock.settings.Settings;
import dev.airlock.spi.Backend;
import dev.airlock.spi.CoreAccess;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.RawResult;
import dev.airlock.spi.StdinWriter;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The one environment the core runs for every backend: it composes the bootstrap (probe and
 * containment), the exec runs, capture, the reaper and the lifecycle around a {@link Backend} that
 * supplies transport only. Providers get one through {@link OpenContext#open(Backend)}.
 */
public final class CoreEnvironment implements ContainedEnvironment {

    private final Backend backend;
    private final String name;
    private final String id;
    private final Settings settings;
    private final CoreSettings config;
    private final Listeners listeners;
    private final Workers workers;
    private final LiveExecs live = new LiveExecs();
    private final Spills spills = new Spills();
    private final RawRuns rawRuns;
    private final Hooks hooks;
    private final Reaper reaper;
    private final Lifecycle lifecycle;
    private final AtomicLong execIds = new AtomicLong();
    private final ChildVariables children;
    private final ContainmentSettings containmentSettings;
    private final RemoteFiles shellFiles;
    /** {@link #shellFiles} for a backend's native file API to fall back on, behind the guard it judged the path in. */
    private final RemoteFiles fallbackFiles;
    private final NativeWrites nativeWrites;
    private final SafetyGate safety;
    private final CorePorts ports;
    private volatile Target target;
    private volatile Containment containment;
    /** The shell user commands run in, by absolute path (see {@link Bootstrap.Probed#shell}). */
    private volatile String shell;
    /** Airlock's own state as commands found it, where they can write it (see {@link StateWitness}). */
    private volatile Optional<StateWitness> stateWitness = Optional.empty();

    private CoreEnvironment(Backend backend, OpenContext context) {
        this.backend = backend;
        this.name = backend.name();
        this.id = backend.id();
        this.settings = context.settings();
        this.config = CoreSettings.from(settings, backend.killStepCost());
        this.containmentSettings = ContainmentSettings.from(settings);
        this.children = new ChildVariables(backend, settings, containmentSettings);
        this.listeners = new Listeners(name, id, context.listeners(), settings);
        this.workers = new Workers(name);
        this.rawRuns = new RawRuns(this);
        this.hooks = new Hooks(backend, rawRuns, config.stopBound(), workers);
        this.reaper = new Reaper(this, config.killGrace());
        this.shellFiles = new ShellFiles(this, false);
        this.fallbackFiles = new ShellFiles(this, true);
        this.nativeWrites = new NativeWrites(workers);
        this.lifecycle = new Lifecycle(this, "airlock-shutdown-" + id);
        this.safety = new SafetyGate(this, settings, context.approvalChannel());
        this.ports = new CorePorts(this);
    }

    /**
     * Makes the core environment for {@code backend} and hands the backend its {@link CoreAccess}.
     * Does not open it; {@link #initialize()} does.
     */
    public static CoreEnvironment create(Backend backend, OpenContext context) {
        CoreEnvironment env = new CoreEnvironment(backend, context);
        backend.bind(new BackendAccess(env));
        return env;
    }

    /** Probes the target and creates the private dir; once, before the first exec. */
    public void initialize() {
        Bootstrap.checkHooks(backend);
        // A word in airlock.ports that is no port: one line at open, and the sandbox stopped (open's caller closes).
        dev.airlock.Ports.declared(settings);
        String base = containmentSettings.privateDirBase()
                .orElseGet(() -> backend.privateDirBase().orElseGet(this::defaultPrivateDirBase));
        Bootstrap.Probed probed = Bootstrap.probe(this, containmentSettings, base);
        this.target = probed.target();
        this.containment = probed.plan();
        this.shell = probed.shell();
        Bootstrap.prepare(this, probed.plan());
        backend.onTargetReady(target, containment);
        if (Bootstrap.commandsCanWriteOwnState(backend, target)) {
            stateWitness = Optional.of(StateWitness.of(OwnState.stateFiles(settings)));
        }
        lifecycle.registerShutdownHook();
        emit("open", target.user() + "@" + target.hostname(), Map.of("home", containment.home(),
                "container", target.container(), "profile", containment.profile().label()));
    }

    Optional<StateWitness> stateWitness() {
        return stateWitness;
    }

    /** The backend's stdin writer when it takes stdin streamed by offset (streamed PAYLOAD); else empty (a pipe). */
    Optional<StdinWriter> streamedStdin() {
        Capabilities c = backend.capabilities();
        return c.stdinMode() == StdinMode.PAYLOAD && c.payloadStrategy() == PayloadStrategy.STREAMED
                ? backend.stdinWriter() : Optional.empty();
    }

    /** The core's default private dir base: {@code airlock.private-dir.base}, else {@code ${TMPDIR:-/tmp}}. */
    String defaultPrivateDirBase() {
        return settings.get("airlock.private-dir.base").orElse("${TMPDIR:-/tmp}");
    }

    // ---------------------------------------------------------------- Environment

    @Override
    public String id() {
        return id;
    }

    @Override
    public String name() {
        return name;
    }

    /** Where commands run, as messages about a lost connection name it. */
    String destination() {
        return backend.destination();
    }

    @Override
    public Capabilities capabilities() {
        return backend.capabilities();
    }

    @Override
    public Target target() {
        Target t = target;
        if (t == null) {
            throw new IllegalStateException("the target is not probed yet: it is known once the environment opened");
        }
        return t;
    }

    @Override
    public Containment containment() {
        Containment c = containment;
        if (c == null) {
            throw new IllegalStateException("the target is not probed yet: it is known once the environment opened");
        }
        return c;
    }

    @Override
    public String isolation() {
        return backend.isolation();
    }

    @Override
    public Optional<String> allowlistCheck() {
        return backend.allowlistCheck();
    }

    /** {@link Backend#credentialsReadOnly}, for the guard's rules. */
    boolean credentialsReadOnly() {
        return backend.credentialsReadOnly();
    }

    @Override
    public RemoteFiles files() {
        // A backend's own file API passes the same write tiers as the shell implementation; the
        // listeners hear of every change either way.
        return new AuditedFiles(this, backend.files().<RemoteFiles>map(n -> new GuardedFiles(this, n)).orElse(shellFiles));
    }

    @Override
    public dev.airlock.Ports ports() {
        return ports;
    }

    /** The ports' forwards, ended at close before the sandbox stops. */
    CorePorts corePorts() {
        return ports;
    }

    public boolean isClosed() {
        return lifecycle.isClosed();
    }

    @Override
    public String snapshot() {
        return CoreSnapshot.take(this);
    }

    @Override
    public void close() {
        lifecycle.close();
    }

    @Override
    public ExecResult exec(ExecRequest request) {
        return awaitCancellingOnInterrupt(start(request));
    }

    /**
     * Waits for {@code e}; an interrupt of the waiting thread cancels the command and waits for
     * its stop, within the stop bound, then returns the cancelled result with the interrupt kept.
     * Plain execs and a session's execs alike.
     */
    private ExecResult awaitCancellingOnInterrupt(Execution e) {
        try {
            return e.await();
        } catch (InterruptedException ie) {
            // Thread interrupt means cancel.
            e.cancel();
            try {
                // The stop bound, not the grace: a slow declared kill or a large slack still ends within it.
                return e.await(config.stopBound().plusSeconds(5)).orElseThrow(() ->
                        new BackendException("the command did not stop after the interrupt"));
            } catch (InterruptedException again) {
                throw new BackendException("interrupted twice while cancelling the command");
            } finally {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public Execution start(ExecRequest request) {
        return startRun(request, false);
    }

    /** Runs one of Airlock's own scripts through the full flow (staging, kill, capture) without the guard. */
    Execution startInternal(String script, Payload stdin, OutputStream out, OutputStream err) {
        ExecRequest.Builder b = ExecRequest.builder(script);
        if (stdin != null) {
            b.stdin(stdin);
        }
        if (out != null) {
            b.output(out, err);
        }
        return startRun(b.build(), true);
    }

    @Override
    public Session session() {
        return session(null);
    }

    @Override
    public Session session(SessionStore store) {
        ensureOpen();
        ShellSession.Starter starter = new ShellSession.Starter() {
            @Override
            public Execution start(ExecRequest request, SessionHook hook) {
                return startRun(request, false, hook);
            }

            @Override
            public ExecResult await(Execution e) {
                return awaitCancellingOnInterrupt(e);
            }
        };
        return new ShellSession(this, starter,
                settings.getBoolean(ShellSession.WAIT_KEY, true), store);
    }

    private ExecRun startRun(ExecRequest request, boolean internal) {
        return startRun(request, internal, null);
    }

    /** A user's exec, or Airlock's own ({@code internal}); {@code session} wraps it when it runs in a session. */
    private ExecRun startRun(ExecRequest request, boolean internal, SessionHook session) {
        ExecRun run = new ExecRun(this, execIds.incrementAndGet(), request, internal, session);
        // The one check that the environment is open: registration and the stop hold one lock, so
        // either close sees this exec and cancels it, or the exec is refused here (a check before
        // it would leave a gap in which close took its list of execs without this one).
        LiveExecs.Refusal refused = live.register(run);
        if (refused == LiveExecs.Refusal.STOPPED) {
            throw closedException();
        } else if (refused == LiveExecs.Refusal.FULL) {
            throw new BackendException(LiveExecs.MAX_LIVE + " commands already run on the " + name + " environment " + id
                    + "; wait for some to finish before starting more");
        }
        if (!internal) {
            stateWitness.ifPresent(StateWitness::commandsMayRun);
        }
        if (!workers.tryExecute(run::flow)) {
            live.remove(run);
            live.flowEnded(run); // it never had one
            ensureOpen();
            throw new BackendException("no thread is free on the " + name + " environment " + id
                    + "; wait for running commands to finish");
        }
        return run;
    }

    void ensureOpen() {
        if (lifecycle.isClosed() || live.isStopped()) {
            throw closedException();
        }
    }

    private EnvironmentClosedException closedException() {
        boolean byCancel = live.isStopped() && !lifecycle.isClosed();
        return new EnvironmentClosedException("the " + name + " environment " + id
                + (byCancel ? " was stopped by a sandbox-wide cancel (airlock.cancel=sandbox)" : " is closed")
                + "; open a new one");
    }

    // ---------------------------------------------------------------- safety

    /** The command guard and the write tiers, in front of every user command and file change. */
    SafetyGate safety() {
        return safety;
    }

    @Override
    public GuardMode.Verdict commandGuard() {
        return GuardMode.decide(settings, capabilities());
    }

    // ---------------------------------------------------------------- children's environment

    /** The variables a child gets on top of the inherited environment: containment's, then the request's. */
    Map<String, String> childSet(ExecRequest req) {
        return children.set(containment(), target(), req);
    }

    @Override
    public Set<String> strippedSecretVariables() {
        return children.strippedSecrets();
    }

    /** The core's proposal of variables no child inherits (see {@link ChildVariables#proposedUnset}). */
    Set<String> defaultChildUnset() {
        return children.proposedUnset();
    }

    /** What the backend removes from every child's inherited environment. */
    Set<String> childUnset() {
        return children.unset();
    }

    // ---------------------------------------------------------------- raw runs and events

    /** Runs a small internal {@code sh} script straight through launch; output capped at 1 MiB. */
    RawResult runRaw(String script, Payload stdin) throws IOException {
        return rawRuns.run(script, stdin);
    }

    /** Reports an audit event to every listener. */
    void emit(String type, String subject, Map<String, Object> fields) {
        listeners.emit(type, subject, fields);
    }

    void transition(ExecTransition t) {
        listeners.transition(t);
    }

    // ---------------------------------------------------------------- parts, for the exec run and lifecycle

    Backend backend() {
        return backend;
    }

    /** The backend this environment runs on, when it is a {@code type}. */
    public <T extends Backend> Optional<T> backend(Class<T> type) {
        return type.isInstance(backend) ? Optional.of(type.cast(backend)) : Optional.empty();
    }

    /**
     * The core's file operations as scripts, for a backend's native file API to fall back on: the
     * path as given is not judged again (the guard in front of that API did), a physical place
     * found on the way is.
     */
    RemoteFiles shellFiles() {
        return fallbackFiles;
    }

    Lifecycle lifecycle() {
        return lifecycle;
    }

    Hooks hooks() {
        return hooks;
    }

    Reaper reaper() {
        return reaper;
    }

    Workers workers() {
        return workers;
    }

    LiveExecs live() {
        return live;
    }

    Spills spills() {
        return spills;
    }

    NativeWrites nativeWrites() {
        return nativeWrites;
    }

    CoreSettings config() {
        return config;
    }

    /** The shell user commands run in, by absolute path (see {@link Bootstrap.Probed#shell}). */
    String shell() {
        return shell;
    }

    Target probedTarget() {
        return target;
    }

    Listeners listeners() {
        return listeners;
    }

    void ended(ExecRun run) {
        live.remove(run);
    }

    void linger(RemoteProcess p, Reaper.Identity identity) {
        live.linger(p, identity);
    }

    void unlinger(RemoteProcess p) {
        live.unlinger(p);
    }

    /** With {@code airlock.cancel=sandbox}, a cancel that stopped an exec stops the sandbox too. */
    void cancelledBySandboxPolicy() {
        if (config.cancelStopsSandbox()) {
            lifecycle.stopFromCancel();
        }
    }

    static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // closing a pipe to a process that already ended
        }
    }
}
