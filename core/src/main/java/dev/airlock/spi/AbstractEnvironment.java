package dev.airlock.spi;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.Capabilities;
import dev.airlock.CapturedOutput;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.StagingException;
import dev.airlock.StdinMode;
import dev.airlock.Target;
import dev.airlock.WriteOptions;
import dev.airlock.containment.ContainerDetection;
import dev.airlock.containment.Containment;
import dev.airlock.containment.ContainmentSettings;
import dev.airlock.containment.SecretVariables;
import dev.airlock.containment.Shims;
import dev.airlock.containment.TargetProbe;
import dev.airlock.event.AuditEvent;
import dev.airlock.event.AuditFileListener;
import dev.airlock.event.ExecListener;
import dev.airlock.event.ExecState;
import dev.airlock.event.ExecTransition;
import dev.airlock.internal.ExecStateMachine;
import dev.airlock.internal.OutputCapture;
import dev.airlock.internal.OutputPump;
import dev.airlock.internal.StopOnce;
import dev.airlock.safety.GuardMode;
import dev.airlock.safety.Safety;
import dev.airlock.settings.Settings;
import dev.airlock.shell.Shell;
import dev.airlock.shell.StdinScripts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The base class every backend extends. It owns the whole exec flow (the target probe, the
 * children's environment, stdin by mode, the state machine, timeouts, cancel, output capture,
 * cleanup) and the shell implementation of {@link #files()}. A backend supplies hooks only:
 * {@link #launch} (required), and where it has better means, {@link #stage}, {@link #removeStaged},
 * {@link #kill}, {@link #stopSandbox} and {@link #nativeFiles}.
 *
 * <p>A subclass constructor calls {@code super(...)}, sets up its client, then calls
 * {@link #initialize()} as its last step (or the provider calls it right after construction).
 */
public abstract class AbstractEnvironment implements Environment {
    private static final Logger LOG = LoggerFactory.getLogger(AbstractEnvironment.class);
    static final int MAX_LIVE = LiveExecs.MAX_LIVE;
    private static final int NO_STATUS = RemoteProcess.NO_STATUS;

    public static final String CANCEL_KEY = "airlock.cancel";
    public static final String OUTPUT_MAX_KEY = "airlock.output.max-bytes";
    public static final String KILL_GRACE_KEY = "airlock.kill.grace";
    public static final String MAX_STAGED_KEY = "airlock.stdin.max-staged-bytes";
    public static final String OUTPUT_GRACE_KEY = "airlock.exec.output-grace";
    public static final String AUDIT_FILE_KEY = "airlock.audit.file";

    private final String backend;
    private final String id;
    protected final OpenContext context;
    protected final Settings settings;
    private final List<ExecListener> listeners;
    private final AuditFileListener auditFile;
    private final Object lock = new Object();
    private final ExecutorService workers;
    private final ScheduledExecutorService timers;
    private final LiveExecs live = new LiveExecs();
    private final Spills spills = new Spills();
    private final Reaper reaper;
    private final RawRuns rawRuns;
    private final StopOnce stopOnce;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong execIds = new AtomicLong();
    private final boolean cancelStopsSandbox;
    private final long outputCap;
    private final Duration killGrace;
    private final Duration outputGrace;
    private final long maxStaged;
    private final SecretVariables secrets;
    private final ContainmentSettings containmentSettings;
    private final Thread shutdownHook;
    private volatile Target target;
    private volatile Containment containment;
    private final RemoteFiles shellFiles;
    private final Object safetyLock = new Object();
    private volatile Safety safety;

    protected AbstractEnvironment(String backend, String id, OpenContext context) {
        this.backend = backend;
        this.id = id;
        this.context = context;
        this.settings = context.settings();
        this.cancelStopsSandbox = "sandbox".equals(settings.getChoice(CANCEL_KEY, "exec", "exec", "sandbox"));
        this.outputCap = settings.getBytes(OUTPUT_MAX_KEY, 16L << 20);
        this.killGrace = settings.getDuration(KILL_GRACE_KEY, Duration.ofSeconds(1));
        this.outputGrace = settings.getDuration(OUTPUT_GRACE_KEY, Duration.ofSeconds(2));
        this.maxStaged = settings.getBytes(MAX_STAGED_KEY, 1L << 30);
        this.secrets = SecretVariables.from(settings);
        this.containmentSettings = ContainmentSettings.from(settings);
        List<ExecListener> l = new ArrayList<>(context.listeners());
        this.auditFile = settings.get(AUDIT_FILE_KEY).map(f -> new AuditFileListener(Path.of(f))).orElse(null);
        if (auditFile != null) {
            l.add(auditFile);
        }
        this.listeners = List.copyOf(l);
        AtomicInteger n = new AtomicInteger();
        ThreadFactory tf = r -> {
            Thread t = new Thread(r, "airlock-" + backend + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        // Bounded: at most MAX_LIVE execs run at once, each needing a few threads (flow, two pumps,
        // stdin, kill); a pump given up on after the output grace releases its transport and ends.
        this.workers = new ThreadPoolExecutor(0, MAX_LIVE * 5 + 16, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), tf);
        this.timers = Executors.newSingleThreadScheduledExecutor(tf);
        this.stopOnce = new StopOnce(this::stopNow);
        this.reaper = new Reaper(this, killGrace);
        this.rawRuns = new RawRuns(this);
        this.shellFiles = new ShellFiles(this);
        this.shutdownHook = new Thread(this::closeFromHook, "airlock-shutdown-" + id);
    }

    // ---------------------------------------------------------------- hooks

    /**
     * Starts {@code launch.shell() -c launch.script()} on the target and returns at once. The
     * core streams stdin when {@link Launch#pipeStdin()}, drains both outputs and waits.
     * Throw an {@link IOException} when the command could not be started (it did not run), or a
     * {@link dev.airlock.DispatchOutcomeUnknownException} when whether it started is unknown.
     */
    protected abstract RemoteProcess launch(Launch launch) throws IOException;

    /** What the backend does natively. */
    @Override
    public abstract Capabilities capabilities();

    /**
     * Puts {@code data} at {@code path} on the target with mode 0600 (for PAYLOAD stdin, staged
     * env and scripts). The default streams it through {@code cat} with the backend's stdin pipe.
     */
    protected void stage(String path, Payload data) throws IOException {
        String script = "umask 077\ncat > " + Shell.quotePath(path) + "\n";
        RawResult r = runRaw(script, data);
        if (r.exit() != 0) {
            throw new IOException("cat exited " + r.exit() + ": " + r.stderrLine());
        }
    }

    /** Removes a staged path; the default runs {@code rm -f}. Must not fail when it is already gone. */
    protected void removeStaged(String path) throws IOException {
        runRaw("rm -f -- " + Shell.quotePath(path) + "\n", null);
    }

    /**
     * Signals an exec's whole process tree: SIGTERM first ({@code force=false}), SIGKILL after
     * the grace period. {@code pgid} is the command's process group, from the backend or from the
     * launcher record, already checked against its leader's start time; empty when neither knows
     * it (then only a native kill can help). The default signals the group in a second exec.
     */
    protected void kill(RemoteProcess process, OptionalLong group, boolean force) throws IOException {
        long pgid = group.orElseThrow(() -> new IOException(
                "the command's process group is unknown and the backend has no native kill"));
        runRaw(Shell.killProcessGroup(force ? "KILL" : "TERM", pgid) + " 2>/dev/null\nexit 0\n", null);
    }

    /**
     * Reads a process group right before the core signals it: whether it has members, and its
     * leader's start time. The default asks the target with builtins and {@code /proc}; a backend
     * whose commands run in another pid namespace than its scripts overrides it.
     */
    protected GroupState groupState(long pgid) throws IOException {
        RawResult r = runRaw(Shell.groupStateScript(pgid), null);
        return GroupState.parse(new String(r.stdout(), StandardCharsets.UTF_8));
    }

    /** Stops the sandbox (called once, by close or a sandbox-wide cancel). Attached sandboxes must be left running. */
    protected void stopSandbox() {
    }

    /** A backend's own file API, used instead of the shell implementation where present. */
    protected Optional<RemoteFiles> nativeFiles() {
        return Optional.empty();
    }

    /**
     * Where the private dir is made on the target: a shell expression, by default {@code ${TMPDIR:-/tmp}}.
     * The eval profile overrides it with {@code RUN_DIR/tmp}, so nothing lands in the shared temp dir.
     */
    protected String privateDirBase() {
        return settings.get("airlock.private-dir.base").orElse("${TMPDIR:-/tmp}");
    }

    // ---------------------------------------------------------------- lifecycle

    /** Probes the target and creates the private dir; call once, as the last step of construction. */
    protected final void initialize() {
        String base = containmentSettings.privateDirBase().orElseGet(this::privateDirBase);
        Bootstrap.Probed probed = Bootstrap.probe(this, containmentSettings, base);
        this.target = probed.target();
        this.containment = probed.plan();
        Bootstrap.prepare(this, probed.plan());
        onTargetReady(target, containment);
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        emit("open", target.user() + "@" + target.hostname(), Map.of("home", containment.home(),
                "container", target.container(), "profile", containment.profile().label()));
    }

    /**
     * Called once at the end of {@link #initialize()}, when the target is probed and the children's
     * home, temp dir and shims exist: a backend that isolates its commands (bubblewrap, say) sets
     * that up here, and launches everything after it isolated. The probe and the setup before it
     * run as launched.
     */
    protected void onTargetReady(Target target, Containment containment) {
    }

    /** How commands are isolated beyond their environment, in one line for {@code doctor}; "none" by default. */
    public String isolation() {
        return "none";
    }

    /** How this environment contains its children (home, temp dir, shims), decided at open. */
    public final Containment containment() {
        Containment c = containment;
        if (c == null) {
            throw new IllegalStateException("the environment was not initialized; call initialize() at the end of the constructor");
        }
        return c;
    }

    @Override
    public final String id() {
        return id;
    }

    @Override
    public final String name() {
        return backend;
    }

    @Override
    public final Target target() {
        Target t = target;
        if (t == null) {
            throw new IllegalStateException("the environment was not initialized; call initialize() at the end of the constructor");
        }
        return t;
    }

    @Override
    public RemoteFiles files() {
        // A backend's own file API passes the same write tiers as the shell implementation.
        return nativeFiles().<RemoteFiles>map(n -> new GuardedFiles(this, n)).orElse(shellFiles);
    }

    public boolean isClosed() {
        return closed.get();
    }

    @Override
    public final void close() {
        if (!closed.compareAndSet(false, true)) {
            stopOnce.stop(); // a second closer waits for the first to finish
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException ignored) {
            // the JVM is already shutting down: this close is the hook's
        }
        stopOnce.stop();
    }

    /**
     * The JVM's shutdown hook: closes this environment, and when a close is already running (on
     * another thread) waits for it, so containers and remote processes are not left behind.
     */
    void closeFromHook() {
        closed.set(true);
        stopOnce.stop();
    }

    /** Runs exactly once: cancel live execs, remove the private dir, stop the sandbox, free threads. */
    private void stopNow() {
        List<ExecRun> runs = live.stop();
        for (ExecRun r : runs) {
            // In parallel: each stop is bounded by the kill grace plus a second, and so is the sum.
            runAsync(() -> r.stop(dev.airlock.internal.ExecStateMachine.Cause.CANCEL));
        }
        long deadline = System.nanoTime() + stopBound().toNanos() + TimeUnit.SECONDS.toNanos(2);
        for (ExecRun r : runs) {
            r.awaitResultQuietly(Math.max(0, deadline - System.nanoTime()));
        }
        live.drainLingering((p, id) -> reaper.signal(p, id, true));
        Target t = target;
        if (t != null) {
            try {
                runRaw("rm -rf -- " + Shell.quotePath(t.privateDir()) + "\n", null);
            } catch (IOException | AirlockException e) {
                LOG.debug("could not remove the private dir {}: {}", t.privateDir(), e.getMessage());
            }
        }
        try {
            stopSandbox();
        } catch (RuntimeException e) {
            LOG.warn("stopping the {} sandbox {} failed: {}", backend, id, e.getMessage());
        }
        emit("close", id, Map.of());
        // Not shutdownNow: a kill or clean-up still running (a command launched while close ran)
        // must finish; stuck flows were interrupted at their deadlines already.
        workers.shutdown();
        timers.shutdownNow();
        spills.deletePending();
        if (auditFile != null) {
            auditFile.close();
        }
    }

    Spills spills() {
        return spills;
    }

    private void ensureOpen() {
        boolean stopped = live.isStopped();
        if (closed.get() || stopped) {
            throw new EnvironmentClosedException("the " + backend + " environment " + id
                    + (stopped && !closed.get() ? " was stopped by a sandbox-wide cancel (airlock.cancel=sandbox)" : " is closed")
                    + "; open a new one");
        }
    }

    // ---------------------------------------------------------------- safety

    /**
     * The command guard's entry: called for every user command (never for Airlock's own scripts)
     * before anything is staged. Throws {@link dev.airlock.DeniedException} to refuse it.
     */
    void beforeCommand(ExecRequest request) {
        Target t = target();
        safety().checkCommand(request.command(), request.cwd().map(t::expand), request.env());
    }

    /**
     * The write tiers' entry: called by the file operations that change {@code path}
     * ({@code write}, {@code delete}, {@code mkdirs}, {@code copyIn}) before they run.
     */
    final void beforeWrite(String path, String operation) {
        ensureOpen(); // before the rules load through the backend: a closed one may have no client left
        safety().checkWrite(path, operation);
    }

    /** The safety rules, made on first use (they need the probed target). */
    private Safety safety() {
        Safety s = safety;
        if (s != null) {
            return s;
        }
        synchronized (safetyLock) {
            if (safety == null) {
                safety = new Safety(backend, target(), containment(), settings, capabilities(), context.approvalChannel(),
                        script -> {
                            RawResult r = runRaw(script, null);
                            if (r.exit() != 0) {
                                throw new IOException("exit " + r.exit() + ": " + r.stderrLine());
                            }
                            return r.stdout();
                        }, this::emit);
            }
            return safety;
        }
    }

    /** Whether the command guard is in force here, and why ({@code airlock.guard}; shown by {@code doctor}). */
    public final GuardMode.Verdict commandGuard() {
        return GuardMode.decide(settings, capabilities());
    }

    // ---------------------------------------------------------------- exec

    @Override
    public final ExecResult exec(ExecRequest request) {
        Execution e = start(request);
        try {
            return e.await();
        } catch (InterruptedException ie) {
            // Thread interrupt means cancel.
            e.cancel();
            try {
                return e.await(killGrace.plusSeconds(5)).orElseThrow(() ->
                        new BackendException("the command did not stop after the interrupt"));
            } catch (InterruptedException again) {
                throw new BackendException("interrupted twice while cancelling the command");
            } finally {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public final Execution start(ExecRequest request) {
        return startRun(request, false);
    }

    /** Runs one of Airlock's own scripts through the full flow (staging, kill, capture) without the guard. */
    final Execution startInternal(String script, Payload stdin, OutputStream out, OutputStream err) {
        ExecRequest.Builder b = ExecRequest.builder(script);
        if (stdin != null) {
            b.stdin(stdin);
        }
        if (out != null) {
            b.output(out, err);
        }
        return startRun(b.build(), true);
    }

    private ExecRun startRun(ExecRequest request, boolean internal) {
        return startRun(request, internal, null);
    }

    @Override
    public final dev.airlock.session.Session session() {
        return session(null);
    }

    @Override
    public final dev.airlock.session.Session session(dev.airlock.session.SessionStore store) {
        ensureOpen();
        return new dev.airlock.session.ShellSession(this, (request, hook) -> startRun(request, false, hook),
                settings.getBoolean(dev.airlock.session.ShellSession.WAIT_KEY, true), store);
    }

    private ExecRun startRun(ExecRequest request, boolean internal, dev.airlock.session.SessionHook session) {
        ensureOpen();
        ExecRun run = new ExecRun(this, execIds.incrementAndGet(), request, internal, session);
        LiveExecs.Refusal refused = live.register(run);
        if (refused == LiveExecs.Refusal.STOPPED) {
            ensureOpen();
        } else if (refused == LiveExecs.Refusal.FULL) {
            throw new BackendException(MAX_LIVE + " commands already run on the " + backend + " environment " + id
                    + "; wait for some to finish before starting more");
        }
        try {
            workers.execute(run::flow);
        } catch (RejectedExecutionException e) {
            live.remove(run);
            ensureOpen();
            throw new BackendException("no thread is free on the " + backend + " environment " + id
                    + "; wait for running commands to finish");
        }
        return run;
    }

    // ---------------------------------------------------------------- for the exec run

    void transition(ExecTransition t) {
        for (ExecListener l : listeners) {
            try {
                l.onTransition(t);
            } catch (RuntimeException e) {
                LOG.warn("an ExecListener failed on a transition: {}", e.toString());
            }
        }
    }

    /** Runs {@code task} on a worker after {@code delay}; the timer thread itself never blocks. */
    ScheduledFuture<?> schedule(Runnable task, Duration delay) {
        try {
            return timers.schedule(() -> runAsync(task), delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            runAsync(task); // closed: run it now
            return null;
        }
    }

    /**
     * Runs {@code task} on a worker; when the pool is shut down or full, on a thread of its own,
     * because what is asked here (a pump, a kill, a cleanup) must run for a command that runs.
     */
    void runAsync(Runnable task) {
        try {
            workers.execute(task);
        } catch (RejectedExecutionException e) {
            Thread t = new Thread(task, "airlock-" + backend + "-extra");
            t.setDaemon(true);
            t.start();
        }
    }

    void ended(ExecRun run) {
        live.remove(run);
    }

    void linger(RemoteProcess p, Reaper.Identity identity) {
        live.linger(p, identity);
    }

    /** With {@code airlock.cancel=sandbox}, a cancel that stopped an exec stops the sandbox too. */
    void cancelledBySandboxPolicy() {
        if (cancelStopsSandbox && !stopOnce.isStopped()) {
            runAsync(stopOnce::stop);
        }
    }

    Reaper reaper() {
        return reaper;
    }

    /** How long a timeout or cancel may take before the caller has its result: the kill grace plus a second. */
    Duration stopBound() {
        return killGrace.plusSeconds(1);
    }

    long outputCap() {
        return outputCap;
    }

    Duration outputGrace() {
        return outputGrace;
    }

    long maxStaged() {
        return maxStaged;
    }

    /** The variables a child gets on top of the inherited environment: containment's, then the request's. */
    Map<String, String> childSet(ExecRequest req) {
        return containment().childVariables(target().scratchDir(), req.env());
    }

    /** The names (never values) of the JVM's variables no child gets because they are secrets; for {@code doctor}. */
    public final Set<String> strippedSecretVariables() {
        return secrets.among(System.getenv().keySet());
    }

    /**
     * Variables to remove from what the child inherits: the secrets among the JVM's variables (a
     * child of a native-env backend inherits them) and the containment's list (the eval profile
     * drops the user bus). Backends with native env remove them in {@link #launch}; for the others
     * the staged env script unsets them.
     */
    protected Set<String> childUnset() {
        Set<String> out = new TreeSet<>(secrets.among(System.getenv().keySet()));
        out.addAll(containmentSettings.unset());
        return out;
    }


    // ---------------------------------------------------------------- raw runs (probe, staging, kill)

    /**
     * Runs a small internal {@code sh} script directly through {@link #launch}, streaming
     * {@code stdin} if given. For the probe, staging, removal and kill; output is capped at 1 MiB.
     */
    protected final RawResult runRaw(String script, Payload stdin) throws IOException {
        return rawRuns.run(script, stdin);
    }

    // ---------------------------------------------------------------- helpers

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

    /** Reports an audit event to every listener. */
    protected final void emit(String type, String subject, Map<String, Object> fields) {
        AuditEvent ev = new AuditEvent(Instant.now(), type, backend, id, subject, fields);
        for (ExecListener l : listeners) {
            try {
                l.onEvent(ev);
            } catch (RuntimeException e) {
                LOG.warn("an ExecListener failed: {}", e.toString());
            }
        }
    }


    /** The environment's worker threads, for helpers such as {@link ShellFiles}. */
    final ExecutorService workers() {
        return workers;
    }

}
