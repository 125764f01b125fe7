package dev.airlock.spi;

import dev.airlock.internal.BulkInputStream;
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
import dev.airlock.internal.StartedMarkStream;
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
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
    private static final int HEAP_CAPTURE = 1 << 20;
    private static final int CHUNK = 64 * 1024;
    /** Fake "exit" a waitFor reports when the transport died; never a real status. */
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
    private final Set<Run> live = ConcurrentHashMap.newKeySet();
    /** Finished execs whose background processes still held their output: killed on close. */
    private final Set<RemoteProcess> lingering = ConcurrentHashMap.newKeySet();
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
    private volatile boolean stopped;
    private volatile Path spillDir;
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
        this.workers = Executors.newCachedThreadPool(tf);
        this.timers = Executors.newSingleThreadScheduledExecutor(tf);
        this.stopOnce = new StopOnce(this::stopNow);
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
        if (r.exit != 0) {
            throw new IOException("cat exited " + r.exit + ": " + r.stderrLine());
        }
    }

    /** Removes a staged path; the default runs {@code rm -f}. Must not fail when it is already gone. */
    protected void removeStaged(String path) throws IOException {
        runRaw("rm -f -- " + Shell.quotePath(path) + "\n", null);
    }

    /**
     * Signals an exec's whole process tree: SIGTERM first ({@code force=false}), SIGKILL after
     * the grace period. The default sends the signal to the process group in a second exec.
     */
    protected void kill(RemoteProcess process, boolean force) throws IOException {
        long pgid = process.processGroup().orElseThrow(() -> new IOException(
                "the backend reports no process group and has no native kill"));
        runRaw(Shell.killProcessGroup(force ? "KILL" : "TERM", pgid) + " 2>/dev/null\nexit 0\n", null);
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
        boolean literal = !base.contains("$");
        RawResult r;
        try {
            r = runRaw(TargetProbe.script(base, literal), null);
        } catch (IOException e) {
            throw new BackendException("cannot run the target probe on " + backend + ": " + e.getMessage(), e);
        }
        if (r.exit != 0) {
            throw new BackendException("the target probe on " + backend + " failed (exit " + r.exit + "): " + r.stderrLine());
        }
        Map<String, String> facts = TargetProbe.parse(r.stdout);
        ContainerDetection.Verdict verdict = ContainerDetection.decide(containmentSettings.container(), facts);
        String processHome = facts.getOrDefault("home", "");
        String passwdHome = facts.getOrDefault("passwd_home", "");
        String realHome = !processHome.isEmpty() ? processHome : !passwdHome.isEmpty() ? passwdHome : "/";
        Containment plan = Containment.plan(containmentSettings, realHome, facts, verdict.container(), verdict.signal());
        String home = plan.home();
        String bash = facts.getOrDefault("bash", "");
        this.target = new Target(facts.getOrDefault("os", ""), facts.getOrDefault("hostname", ""),
                Integer.parseInt(facts.get("uid").trim()), facts.getOrDefault("user", ""),
                passwdHome, processHome, home,
                facts.getOrDefault("tmpdir", "").isEmpty() ? "/tmp" : facts.get("tmpdir"),
                facts.get("private"), bash.isEmpty() ? "sh" : "bash", verdict.container(), verdict.signal());
        this.containment = plan;
        prepareContainment(plan);
        onTargetReady(target, plan);
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        emit("open", target.user() + "@" + target.hostname(), Map.of("home", home, "container", target.container(),
                "profile", plan.profile().label()));
    }

    /** Makes the children's home, and in the eval profile the run dir's layout and the shims. */
    private void prepareContainment(Containment plan) {
        if (plan.runDir().isPresent()) {
            String dir = plan.runDir().get();
            runPrepare("the eval run dir " + dir, Shims.prepareScript(dir));
            String bin = plan.shimDir().orElseThrow();
            for (String name : Shims.SCRIPTS) {
                try {
                    files().write(bin + "/" + name, Payload.of(Shims.script(name, dir)), WriteOptions.mode(0755));
                } catch (AirlockException e) {
                    throw new BackendException("cannot install the " + name + " shim in " + bin + ": " + e.getMessage(), e);
                }
            }
        } else if (plan.profileHome()) {
            runPrepare("the profile home " + plan.home(), "umask 077\nmkdir -p -- " + Shell.quotePath(plan.home()) + "\n");
        }
    }

    private void runPrepare(String what, String script) {
        RawResult mk;
        try {
            mk = runRaw(script, null);
        } catch (IOException e) {
            throw new BackendException("cannot create " + what + ": " + e.getMessage(), e);
        }
        if (mk.exit != 0) {
            throw new BackendException("cannot create " + what + ": " + mk.stderrLine());
        }
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

    private void closeFromHook() {
        if (closed.compareAndSet(false, true)) {
            stopOnce.stop();
        }
    }

    /** Runs exactly once: cancel live execs, remove the private dir, stop the sandbox, free threads. */
    private void stopNow() {
        stopped = true;
        List<Run> runs = new ArrayList<>(live);
        for (Run r : runs) {
            r.cancelForStop();
        }
        long deadline = System.nanoTime() + killGrace.toNanos() + TimeUnit.SECONDS.toNanos(5);
        for (Run r : runs) {
            r.awaitQuietly(Math.max(0, deadline - System.nanoTime()));
        }
        for (RemoteProcess p : lingering) {
            try {
                kill(p, true);
            } catch (IOException | RuntimeException e) {
                LOG.debug("could not kill a lingering process group: {}", e.getMessage());
            }
        }
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
        workers.shutdownNow();
        for (Run r : live) {
            // A flow that never got a thread: its caller gets an answer, not a wait forever.
            r.result.completeExceptionally(new EnvironmentClosedException("the " + backend + " environment " + id
                    + " closed before the command could start; open a new one"));
        }
        timers.shutdownNow();
        deleteSpillDir();
        if (auditFile != null) {
            auditFile.close();
        }
    }

    private void deleteSpillDir() {
        Path dir = spillDir;
        if (dir == null) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort: the files are 0600 and named by random
        }
    }

    private Path spillFile() {
        synchronized (lock) {
            if (spillDir == null) {
                try {
                    spillDir = Files.createTempDirectory("airlock-spill-",
                            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException("cannot create a spill dir for captured output", e);
                }
            }
        }
        return OutputCapture.newSpillFile(spillDir);
    }

    private void ensureOpen() {
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
    private void beforeCommand(ExecRequest request) {
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
                            if (r.exit != 0) {
                                throw new IOException("exit " + r.exit + ": " + r.stderrLine());
                            }
                            return r.stdout;
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

    private Run startRun(ExecRequest request, boolean internal) {
        ensureOpen();
        Run run = new Run(execIds.incrementAndGet(), request, internal);
        live.add(run);
        // Re-check after registering: close sets `stopped` before it snapshots `live`, so either
        // close sees this run and cancels it, or this sees the stop and backs out.
        if (stopped) {
            live.remove(run);
            ensureOpen();
        }
        try {
            workers.execute(run::flow);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            live.remove(run);
            throw new EnvironmentClosedException("the " + backend + " environment " + id + " is closed; open a new one");
        }
        return run;
    }

    /** The variables a child gets on top of the inherited environment: containment's, then the request's. */
    private Map<String, String> childSet(ExecRequest req) {
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


    private final class Run implements Execution {
        final long execId;
        final ExecRequest request;
        final boolean internal;
        final ExecStateMachine sm;
        final CompletableFuture<ExecResult> result = new CompletableFuture<>();
        final CountDownLatch preDispatchCleanup = new CountDownLatch(1);
        final List<String> staged = new ArrayList<>();
        /** Tree kills begun; the result waits for them, so no process of a killed exec outlives its result. */
        final List<CompletableFuture<Void>> kills = new java.util.concurrent.CopyOnWriteArrayList<>();
        volatile RemoteProcess process;
        volatile boolean cancelled;
        volatile boolean timedOut;
        volatile boolean killRequested;
        volatile boolean exited;
        volatile IOException stdinFailure;
        ScheduledFuture<?> timeoutTask;

        Run(long execId, ExecRequest request, boolean internal) {
            this.execId = execId;
            this.request = request;
            this.internal = internal;
            this.sm = new ExecStateMachine(lock, this::observe);
        }

        private void observe(ExecState from, ExecState to) {
            ExecTransition t = new ExecTransition(id, execId, from, to, internal);
            for (ExecListener l : listeners) {
                try {
                    l.onTransition(t);
                } catch (RuntimeException e) {
                    LOG.warn("an ExecListener failed on a transition: {}", e.toString());
                }
            }
        }

        // ---- the flow, on a worker thread

        void flow() {
            Instant started = Instant.now();
            try {
                ExecResult r = runFlow();
                if (!internal) {
                    emit("exec", request.command(), Map.of("exit", r.exitCode(), "timedOut", r.timedOut(),
                            "cancelled", r.cancelled(), "durationMs", Duration.between(started, Instant.now()).toMillis(),
                            "stdoutDropped", r.stdoutDropped(), "stderrDropped", r.stderrDropped()));
                }
                result.complete(r);
            } catch (AirlockException e) {
                if (!internal) {
                    emit("exec", request.command(), Map.of("error", e.kind(), "message", e.getMessage()));
                }
                result.completeExceptionally(e);
            } catch (Throwable e) {
                result.completeExceptionally(new BackendException(backend + ": " + e, e));
            } finally {
                preDispatchCleanup.countDown();
                if (timeoutTask != null) {
                    timeoutTask.cancel(false);
                }
                live.remove(this);
            }
        }

        private ExecResult runFlow() throws IOException, InterruptedException {
            if (!internal) {
                beforeCommand(request);
            }
            // The timeout covers staging too: a stuck upload ends as a timeout, never a hang.
            request.timeout().ifPresent(d -> timeoutTask = timers.schedule(() -> workers.execute(this::onTimeout),
                    d.toNanos(), TimeUnit.NANOSECONDS));
            if (!sm.toStaging()) {
                return cancelledBeforeDispatch();
            }
            Capabilities caps = capabilities();
            Target t = target();
            StringBuilder script = new StringBuilder();
            boolean stagingPrefix = false;
            String command = request.command();
            Map<String, String> set = childSet(request);
            Launch launch;
            try {
                if (!caps.nativeEnv()) {
                    String envPath = StdinScripts.stagedScriptPath(t.stagingDir());
                    stageTracked(envPath, Payload.of(envScript(childUnset(), set)));
                    script.append(StdinScripts.sourceStagedEnv(envPath));
                    stagingPrefix = true;
                }
                boolean pipe = false;
                Optional<Payload> stdin = request.stdin();
                if (stdin.isEmpty()) {
                    script.append(StdinScripts.noStdinPrefix());
                } else if (caps.stdinMode() == StdinMode.PIPE) {
                    pipe = true;
                } else if (caps.stdinMode() == StdinMode.PAYLOAD) {
                    Payload p = stdin.get();
                    if (p.length().isPresent() && p.length().getAsLong() > maxStaged) {
                        throw new ConfigurationException("stdin of " + p.length().getAsLong() + " bytes exceeds "
                                + MAX_STAGED_KEY + " (" + maxStaged + "); raise it or send less");
                    }
                    String path = StdinScripts.stagedStdinPath(t.stagingDir());
                    stageTracked(path, p.length().isPresent() ? p : capped(p));
                    script.append(StdinScripts.redirectPrefix(path));
                    stagingPrefix = true;
                } else {
                    byte[] bytes = readCapped(stdin.get(), StdinScripts.HEREDOC_MAX_BYTES);
                    command = StdinScripts.heredoc(bytes, command);
                }
                String shell = internal ? "sh" : t.shell();
                boolean stagedScript = script.length() + command.length() * 3L > caps.argvLimit();
                if (stagedScript) {
                    String scriptPath = StdinScripts.stagedScriptPath(t.stagingDir());
                    stageTracked(scriptPath, Payload.of(StdinScripts.stagedScript(command).getBytes(StandardCharsets.UTF_8)));
                    script.append(StdinScripts.openStagedScript(scriptPath));
                    stagingPrefix = true;
                }
                // After the staging lines, so a bad cwd cannot leave a staged file behind.
                if (request.cwd().isPresent()) {
                    script.append("cd -- ").append(Shell.quotePath(t.expand(request.cwd().get()))).append(" || exit 126\n");
                }
                if (stagingPrefix) {
                    script.append(StdinScripts.startedMark());
                }
                script.append(stagedScript ? StdinScripts.execStagedScript(shell) : command);
                launch = new Launch(shell, script.toString(), caps.nativeEnv() ? set : Map.of(),
                        caps.nativeEnv() ? childUnset() : Set.of(), pipe, internal);
            } catch (IOException e) {
                removeAllStaged();
                if (sm.state() == ExecState.CANCELLED) {
                    return cancelledBeforeDispatch();
                }
                throw new StagingException("could not stage " + (internal ? "a file operation" : "the command's input")
                        + " on the " + backend + " target: " + e.getMessage(), e);
            } catch (RuntimeException e) {
                removeAllStaged();
                throw e;
            }
            if (!sm.toStaged() || !sm.toDispatched()) {
                removeAllStaged();
                return cancelledBeforeDispatch();
            }
            return dispatch(launch, stagingPrefix);
        }

        private ExecResult dispatch(Launch launch, boolean stagingPrefix) throws InterruptedException {
            Instant began = Instant.now();
            RemoteProcess p;
            try {
                p = launch(launch);
            } catch (IOException e) {
                removeAllStaged();
                throw new BackendException("could not start the command on " + backend + ": " + e.getMessage(), e);
            } catch (RuntimeException e) {
                removeAllStaged();
                throw e;
            }
            process = p;
            if (killRequested) {
                CompletableFuture<Void> kill = new CompletableFuture<>();
                kills.add(kill); // registered before the worker runs, so the result cannot miss it
                workers.execute(() -> killNow(p, kill));
            }

            long cap = request.captureLimit() >= 0 ? request.captureLimit() : outputCap;
            OutputCapture outCap = request.stdoutSink().isPresent() ? null : new OutputCapture(cap, HEAP_CAPTURE, AbstractEnvironment.this::spillFile);
            OutputCapture errCap = request.stderrSink().isPresent() ? null : new OutputCapture(cap, HEAP_CAPTURE, AbstractEnvironment.this::spillFile);
            StartedMarkStream mark = stagingPrefix ? new StartedMarkStream(p.stdout()) : null;
            OutputPump outDrain = new OutputPump(mark != null ? mark : p.stdout(), outCap != null ? outCap : request.stdoutSink().get());
            OutputPump errDrain = new OutputPump(p.stderr(), errCap != null ? errCap : request.stderrSink().get());
            workers.execute(outDrain);
            workers.execute(errDrain);
            StdinWriter writer = null;
            if (launch.pipeStdin()) {
                writer = new StdinWriter(p.stdin(), request.stdin().get());
                workers.execute(writer);
            } else {
                closeQuietly(p.stdin());
            }
            int exit;
            try {
                exit = p.waitFor();
            } catch (InterruptedException e) {
                killTree();
                throw e;
            } finally {
                exited = true;
            }
            awaitKills();
            if (!outDrain.finish(outputGrace) | !errDrain.finish(outputGrace) || p.hasSurvivors()) {
                lingering.add(p);
            }
            if (writer != null) {
                writer.awaitEnd();
            }
            Duration took = Duration.between(began, Instant.now());
            closeQuietly(outCap);
            closeQuietly(errCap);
            flushQuietly(request.stdoutSink());
            flushQuietly(request.stderrSink());
            p.release();
            sm.toDone();
            boolean started = mark == null || mark.seen();
            if (cancelled || timedOut || exit == NO_STATUS || !started) {
                removeAllStaged();
            }
            if (stdinFailure != null) {
                throw new BackendException("reading the stdin payload failed, so the command was killed: "
                        + stdinFailure.getMessage(), stdinFailure);
            }
            for (OutputPump d : List.of(outDrain, errDrain)) {
                if (d.failure() != null && !cancelled && !timedOut) {
                    throw new BackendException("writing the command's " + (d == outDrain ? "stdout" : "stderr")
                            + " to the caller's stream failed: " + d.failure().getMessage(), d.failure());
                }
            }
            if (exit == NO_STATUS && !cancelled && !timedOut) {
                throw new BackendException("the connection to " + backend + " was lost while the command ran;"
                        + " it was not run again (its effects, if any, stand)");
            }
            if (!started && exit == StdinScripts.STAGING_FAILED && !cancelled && !timedOut) {
                String why = errCap != null ? firstLine(errCap.result()) : "";
                throw new StagingException("the staged input could not be opened on the " + backend
                        + " target, so the command did not run" + (why.isEmpty() ? "" : ": " + why));
            }
            int code = timedOut ? ExecResult.EXIT_TIMEOUT : cancelled ? ExecResult.EXIT_CANCELLED : exit;
            return new ExecResult(code, outCap == null ? CapturedOutput.empty() : outCap.result(),
                    errCap == null ? CapturedOutput.empty() : errCap.result(), timedOut, cancelled, took);
        }

        private ExecResult cancelledBeforeDispatch() {
            return new ExecResult(timedOut ? ExecResult.EXIT_TIMEOUT : ExecResult.EXIT_CANCELLED,
                    CapturedOutput.empty(), CapturedOutput.empty(), timedOut, !timedOut, Duration.ZERO);
        }

        private void stageTracked(String path, Payload data) throws IOException {
            synchronized (staged) {
                staged.add(path);
            }
            stage(path, data);
        }

        private void removeAllStaged() {
            List<String> paths;
            synchronized (staged) {
                paths = new ArrayList<>(staged);
                staged.clear();
            }
            for (String path : paths) {
                try {
                    removeStaged(path);
                } catch (IOException | RuntimeException e) {
                    LOG.debug("could not remove staged {}: {}", path, e.getMessage());
                }
            }
        }

        private void onTimeout() {
            if (!exited) {
                timedOut = true;
                stopThisExec(false);
            }
        }

        // ---- cancel and kill

        @Override
        public void cancel() {
            boolean stoppedSomething = stopThisExec(true);
            // A sandbox-wide cancel stops the sandbox only when it cancelled something, and never
            // for Airlock's own operations (closing a read stream cancels its internal exec).
            if (stoppedSomething && cancelStopsSandbox && !internal && !stopOnce.isStopped()) {
                try {
                    workers.execute(stopOnce::stop);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    // closed meanwhile: the stop has run, and cancel stays a no-op that never throws
                }
            }
        }

        /** Cancels this exec alone; used by close, which stops the sandbox itself. */
        void cancelForStop() {
            stopThisExec(true);
        }

        /**
         * Stops this exec by cancel or timeout: before dispatch it never runs (and this returns
         * only after its staged files are gone); after dispatch its process tree is killed.
         * Returns false when there was nothing left to stop.
         */
        private boolean stopThisExec(boolean byCancel) {
            switch (sm.cancel()) {
                case NEVER_DISPATCHED -> {
                    cancelled = byCancel;
                    ExecState from = sm.cancelledFrom();
                    if (from == ExecState.STAGING || from == ExecState.STAGED) {
                        // The flow removes what it staged; return only after it has.
                        awaitCleanup();
                    }
                    return true;
                }
                case KILL -> {
                    cancelled = byCancel;
                    killTree();
                    return true;
                }
                default -> {
                    return false;
                }
            }
        }

        private void awaitCleanup() {
            try {
                preDispatchCleanup.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private void killTree() {
            RemoteProcess p = process;
            if (p == null) {
                killRequested = true; // dispatch in progress: the flow kills as soon as launch returns
                // Read again after the write: if launch returned meanwhile, the flow may have checked
                // killRequested before it was set, so kill here (twice is harmless, never is not).
                p = process;
                if (p == null) {
                    return;
                }
            }
            CompletableFuture<Void> kill = new CompletableFuture<>();
            kills.add(kill);
            killNow(p, kill);
        }

        /**
         * The SIGKILL follows the shell's death by up to a grace period; without this wait a
         * grandchild that ignored SIGTERM could still run when the caller gets the result.
         */
        private void awaitKills() throws InterruptedException {
            for (CompletableFuture<Void> k : kills) {
                try {
                    k.get(killGrace.toMillis() + 30_000, TimeUnit.MILLISECONDS);
                } catch (ExecutionException | TimeoutException e) {
                    LOG.warn("killing a command on {} did not finish: {}", backend, e.toString());
                }
            }
        }

        private void killNow(RemoteProcess p, CompletableFuture<Void> done) {
            try {
                kill(p, false);
                long until = System.nanoTime() + killGrace.toNanos();
                while (!exited && System.nanoTime() < until) {
                    Thread.sleep(10);
                }
                // Always follow with SIGKILL: grandchildren that ignored SIGTERM are in the group too.
                kill(p, true);
            } catch (IOException | RuntimeException e) {
                LOG.warn("killing a command on {} failed: {}", backend, e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                done.complete(null);
            }
        }

        void awaitQuietly(long nanos) {
            try {
                result.get(nanos, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // closing: the outcome no longer matters
            }
        }

        // ---- Execution

        @Override
        public Optional<ExecResult> await(Duration timeout) throws InterruptedException {
            try {
                return Optional.of(result.get(timeout.toNanos(), TimeUnit.NANOSECONDS));
            } catch (TimeoutException e) {
                return Optional.empty();
            } catch (ExecutionException e) {
                throw rethrow(e);
            }
        }

        @Override
        public ExecResult await() throws InterruptedException {
            try {
                return result.get();
            } catch (ExecutionException e) {
                throw rethrow(e);
            }
        }

        @Override
        public Optional<Integer> exitCode() {
            return result.isDone() && !result.isCompletedExceptionally() ? Optional.of(result.join().exitCode()) : Optional.empty();
        }

        @Override
        public boolean isDone() {
            return result.isDone();
        }

        private RuntimeException rethrow(ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof AirlockException ae) {
                // Re-create nothing: the same exception, so callers can catch its type.
                return ae;
            }
            return new BackendException(String.valueOf(c), c);
        }

        // ---- stdin and output pumps

        private final class StdinWriter implements Runnable {
            private final OutputStream to;
            private final Payload payload;
            private final CountDownLatch end = new CountDownLatch(1);
            private volatile boolean readingSource;

            StdinWriter(OutputStream to, Payload payload) {
                this.to = to;
                this.payload = payload;
            }

            @Override
            public void run() {
                byte[] buf = new byte[CHUNK];
                try (InputStream in = payload.open()) {
                    int n;
                    while ((n = readSource(in, buf)) >= 0) {
                        to.write(buf, 0, n);
                        to.flush(); // a live source (a pipe, a terminal) must not wait in a buffer for more input
                    }
                    to.flush();
                } catch (SourceFailure e) {
                    // The caller's payload broke: the command must not take a short input for the
                    // whole, so it is killed before it can see end-of-input.
                    stdinFailure = e.getCause();
                    killTree();
                } catch (IOException e) {
                    // The command exited without reading all of its input, like a pipeline's SIGPIPE.
                    LOG.debug("stdin of exec {} not fully delivered: {}", execId, e.getMessage());
                } finally {
                    closeQuietly(to);
                    end.countDown();
                }
            }

            private int readSource(InputStream in, byte[] buf) throws SourceFailure {
                readingSource = true;
                try {
                    return in.read(buf);
                } catch (IOException e) {
                    throw new SourceFailure(e);
                } finally {
                    readingSource = false;
                }
            }

            /**
             * Called after the command exited. A writer blocked reading the caller's source (an
             * idle pipe that is never closed, like an agent's stdin) would never end: the input
             * has nowhere to go any more, so do not wait for it.
             */
            void awaitEnd() throws InterruptedException {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (!end.await(10, TimeUnit.MILLISECONDS)) {
                    if (readingSource || System.nanoTime() > until) {
                        return;
                    }
                }
            }
        }
    }

    /** Marks a failure of the caller's payload, as opposed to the command's end of the pipe. */
    private static final class SourceFailure extends IOException {
        private static final long serialVersionUID = 1L;

        SourceFailure(IOException cause) {
            super(cause);
        }

        @Override
        public synchronized IOException getCause() {
            return (IOException) super.getCause();
        }
    }

    // ---------------------------------------------------------------- raw runs (probe, staging, kill)

    /** The outcome of one of Airlock's own small scripts, run without the state machine. */
    protected static final class RawResult {
        final int exit;
        final byte[] stdout;
        final byte[] stderr;

        RawResult(int exit, byte[] stdout, byte[] stderr) {
            this.exit = exit;
            this.stdout = stdout;
            this.stderr = stderr;
        }

        public int exit() {
            return exit;
        }

        public byte[] stdout() {
            return stdout.clone();
        }

        String stderrLine() {
            String s = new String(stderr, StandardCharsets.UTF_8).strip();
            int nl = s.indexOf('\n');
            return nl < 0 ? s : s.substring(0, nl);
        }
    }

    /**
     * Runs a small internal {@code sh} script directly through {@link #launch}, streaming
     * {@code stdin} if given. For the probe, staging, removal and kill; output is capped at 1 MiB.
     */
    protected final RawResult runRaw(String script, Payload stdin) throws IOException {
        boolean nativeEnv = capabilities().nativeEnv();
        RemoteProcess p = launch(new Launch("sh", script, Map.of(), nativeEnv ? childUnset() : Set.of(), stdin != null, true));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CompletableFuture<Void> e = CompletableFuture.runAsync(() -> copyCapped(p.stderr(), err), workersOrCommon());
        CompletableFuture<Void> o = CompletableFuture.runAsync(() -> copyCapped(p.stdout(), out), workersOrCommon());
        IOException writeFailure = null;
        try (OutputStream in = p.stdin()) {
            if (stdin != null) {
                try (InputStream src = stdin.open()) {
                    src.transferTo(in);
                } catch (IOException ex) {
                    writeFailure = ex;
                }
            }
        } catch (IOException ignored) {
            // closing stdin of a command that already exited
        }
        int exit;
        try {
            exit = p.waitFor();
            o.get(30, TimeUnit.SECONDS);
            e.get(30, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while running an internal script");
        } catch (ExecutionException | TimeoutException ex) {
            throw new IOException("reading an internal script's output failed: " + ex.getMessage(), ex);
        } finally {
            p.release();
        }
        if (exit == NO_STATUS) {
            throw new IOException("the connection to " + backend + " was lost while an internal script ran");
        }
        if (writeFailure != null && exit == 0) {
            throw new IOException("delivering input failed: " + writeFailure.getMessage(), writeFailure);
        }
        return new RawResult(exit, out.toByteArray(), err.toByteArray());
    }

    private java.util.concurrent.Executor workersOrCommon() {
        // After close shut the pool down, each pump still needs a thread of its own: running it
        // inline would read stderr before writing stdin and could deadlock on a full pipe.
        return workers.isShutdown() ? r -> {
            Thread t = new Thread(r, "airlock-" + backend + "-raw");
            t.setDaemon(true);
            t.start();
        } : workers;
    }

    private static void copyCapped(InputStream in, ByteArrayOutputStream out) {
        byte[] buf = new byte[8192];
        try {
            int n;
            while ((n = in.read(buf)) >= 0) {
                if (out.size() < (1 << 20)) {
                    out.write(buf, 0, Math.min(n, (1 << 20) - out.size()));
                }
            }
        } catch (IOException ignored) {
            // the process ended; what was read is what there is
        }
    }

    // ---------------------------------------------------------------- helpers

    /**
     * {@code unset K} then {@code export K='v'} lines: env values travel in a staged 0600 file, never
     * in the command text. Names that cannot be shell variables cannot be inherited as such either.
     */
    private static byte[] envScript(Set<String> unset, Map<String, String> set) {
        StringBuilder sb = new StringBuilder();
        for (String name : unset) {
            if (name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                sb.append("unset ").append(name).append('\n');
            }
        }
        for (Map.Entry<String, String> e : set.entrySet()) {
            sb.append("export ").append(e.getKey()).append('=').append(Shell.quote(e.getValue())).append('\n');
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }


    private Payload capped(Payload p) throws IOException {
        // Unknown length: staging needs the whole input, so bound it by airlock.stdin.max-staged-bytes.
        InputStream in = p.open();
        return Payload.ofStream(new BulkInputStream() {
            long seen;

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = in.read(b, off, len);
                if (n > 0 && (seen += n) > maxStaged) {
                    throw new IOException("stdin exceeds " + MAX_STAGED_KEY + " (" + maxStaged + " bytes); raise it or send less");
                }
                return n;
            }

            @Override
            public void close() throws IOException {
                in.close();
            }
        });
    }

    private static byte[] readCapped(Payload p, int max) throws IOException {
        try (InputStream in = p.open()) {
            byte[] b = in.readNBytes(max + 1);
            if (b.length > max) {
                throw new ConfigurationException("stdin exceeds " + max + " bytes, the most a heredoc backend can embed");
            }
            return b;
        }
    }

    private static String firstLine(CapturedOutput out) {
        byte[] b;
        try (InputStream in = out.open()) {
            b = in.readNBytes(512);
        } catch (IOException e) {
            return "";
        }
        String s = new String(b, StandardCharsets.UTF_8).strip();
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // closing a pipe to a process that already ended
        }
    }

    private static void flushQuietly(Optional<OutputStream> sink) {
        sink.ifPresent(s -> {
            try {
                s.flush();
            } catch (IOException ignored) {
                // the caller's sink; its own errors surface on its next write
            }
        });
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
