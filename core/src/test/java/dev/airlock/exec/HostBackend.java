package dev.airlock.exec;

import dev.airlock.spi.OpenContext;
import dev.airlock.spi.Launch;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.Capabilities;
import dev.airlock.FileStat;
import dev.airlock.OutputTransport;
import dev.airlock.RemoteFiles;
import dev.airlock.spi.StdinWriter;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.Execution;
import dev.airlock.Target;
import dev.airlock.shell.Shell;
import dev.airlock.spi.Backend;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.GroupState;
import dev.airlock.spi.Killer;
import dev.airlock.spi.RawResult;
import dev.airlock.spi.Stager;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import dev.airlock.Payload;
import dev.airlock.StdinMode;
import dev.airlock.settings.Settings;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test backend that runs the real core on host processes ({@code setsid sh -c}) and can stall,
 * fail or lose any hook on request. Only the user's commands (not the core's own scripts: probe,
 * removal, kill) are affected by the launch faults, so the rest of the core keeps working. Not final:
 * a test overrides a hook to declare a backend its author got wrong.
 */
class HostBackend implements Backend, Stager, Killer {

    /** What a hook does when asked. */
    enum Fault {
        NONE, STALL, STALL_UNINTERRUPTIBLY, FAIL, LOSE,
        /** Fails as a hook the core interrupted at its deadline does: its thread still flagged interrupted. */
        INTERRUPTED,
        /** Stalls until released, then fails (a launch whose request was lost while the caller gave up). */
        STALL_THEN_FAIL,
        /** Returns normally, its work not done, with its thread still flagged interrupted (a hook that overran its deadline). */
        INTERRUPTED_RETURNS,
        /** Fails with a plain IOException, its thread still flagged interrupted. */
        INTERRUPTED_PLAIN
    }

    volatile Fault stage = Fault.NONE;
    volatile Fault launch = Fault.NONE;
    volatile Fault stop = Fault.NONE;
    volatile Fault kill = Fault.NONE;
    /** A fault for SIGTERMs only (a target too slow to take the TERM within the grace). */
    volatile Fault term = Fault.NONE;
    /** A fault for SIGKILLs only. */
    volatile Fault forceKill = Fault.NONE;
    /** A fault for the removal of staged files (after {@link #removeThrows}). */
    volatile Fault removal = Fault.NONE;
    /** How long each kill step (a group read, a signal) takes, as on a backend whose kill is several remote calls. */
    volatile long killStepMillis;
    /** What this backend declares a kill step costs ({@link Backend#killStepCost}); set it before open. */
    volatile Duration killStepCost = Duration.ZERO;
    /** How many of the next SIGKILLs fail (a transient error), before {@link #forceKill} applies. */
    final AtomicInteger forceKillFailures = new AtomicInteger();
    /** How many of the next SIGTERMs fail (a transient error), before {@link #term} applies. */
    final AtomicInteger termFailures = new AtomicInteger();
    /** How many hooks stalled (a STALL fault reached), for a test to wait on the next one. */
    final AtomicInteger stalls = new AtomicInteger();
    /** The scripts of the user commands launch was asked to start, in order (failed launches too). */
    final List<String> launchRequests = new CopyOnWriteArrayList<>();
    /** The hooks the core interrupted while they stalled (at their deadline, or a stop). */
    final List<String> interrupted = new CopyOnWriteArrayList<>();
    /** Printed before the record, like a remote user's ~/.bashrc that prints. */
    volatile String noise = "";
    /** As many bytes again of noise before the record, on both streams (more than a command line can hold). */
    volatile int noiseBytes;
    /** Seconds the shell sleeps before the core's prefix runs, like a slow login. */
    volatile double slowStart;
    /**
     * When set, the user's command runs with its group unknown to the core and its record never
     * delivered, and its transport is lost as soon as this file exists: a connection cut right after
     * the command started, before the record reached the client.
     */
    volatile Path lostBeforeRecordWhen;
    /**
     * When set, the user's command runs with its group unknown to the backend and its launcher
     * record never reaching the core (as on a loaded machine, where it comes after the kill gave
     * up waiting for it), its transport intact.
     */
    volatile boolean recordNeverComes;
    /** What {@link #killsWithoutGroup} answers: false is a kill that signals the group, as docker's. */
    volatile boolean killsWithoutGroup = true;
    /** Why a lost process was lost ({@link RemoteProcess#lostReason}), as a backend whose sandbox ended knows; null: unknown. */
    volatile dev.airlock.AirlockException lostReason;
    /** Report a wrong leader start time, as if the group id had been recycled by another process. */
    volatile boolean recycledIdentity;
    /** Report no start time for the group leader, as a transport without {@code /proc} (or a remote API) does. */
    volatile boolean reportsStartTime = true;
    /**
     * Lead the user's command's group by a wrapper shell that starts it a moment later, as a
     * sandbox API's own process does: the group is the wrapper's, the launcher record's pid the command shell's.
     */
    volatile boolean wrapperLeadsGroup;
    /**
     * Faults of the host steps (probe, profile home, private-dir removal), which the backend
     * answers itself when {@link #answersHostSteps}; the two at open are set before it, in the
     * constructor's {@code beforeOpen}.
     */
    volatile Fault probe = Fault.NONE;
    volatile Fault makeHome = Fault.NONE;
    volatile Fault removePrivateDir = Fault.NONE;
    /** Answer the host steps in Java, as the local backend does (else the core's scripts run). */
    volatile boolean answersHostSteps;
    /** The hostname the backend's own probe answer gives, unlike the script's. */
    static final String ANSWERED_HOSTNAME = "answered-by-the-backend";
    /** The host steps the backend answered, in order. */
    final List<String> hostSteps = new CopyOnWriteArrayList<>();
    /** How many of the core's own scripts (probe, files, staging, kill) were launched. */
    final AtomicInteger scripts = new AtomicInteger();
    /** Those scripts' texts, in order. */
    final List<String> scriptTexts = new CopyOnWriteArrayList<>();
    /** A fault for launching the core's own scripts (a target that cannot be reached for a moment). */
    volatile Fault script = Fault.NONE;
    /** Stages that pass before the stage fault applies (a later file of the same exec fails, say). */
    volatile int stagesBeforeFault;
    final CountDownLatch release = new CountDownLatch(1);
    final CountDownLatch stalled = new CountDownLatch(1);
    final AtomicInteger stops = new AtomicInteger();
    /** How often the core closed this backend. */
    final AtomicInteger closes = new AtomicInteger();
    final List<String> signals = new CopyOnWriteArrayList<>();
    final List<Process> launched = new CopyOnWriteArrayList<>();
    private final Capabilities caps;
    private final boolean shellHooks;
    private final String id = "host-" + System.nanoTime();
    /** The real core, run on this backend. */
    final CoreEnvironment env;

    /** Chunks the streamed-stdin writer got: offset and length. */
    final List<long[]> chunks = new CopyOnWriteArrayList<>();
    /** Per process, how many stdin bytes the streamed writer took. */
    private final java.util.Map<RemoteProcess, Long> received = new java.util.concurrent.ConcurrentHashMap<>();
    /** The lengths the streamed-stdin writer's end was called with. */
    final List<Long> stdinEnds = new CopyOnWriteArrayList<>();
    /** Paths staged (user stdin, env, scripts). */
    final List<String> stagedPaths = new CopyOnWriteArrayList<>();
    /** Paths the core asked the stager to remove. */
    final List<String> removedPaths = new CopyOnWriteArrayList<>();
    /**
     * Thrown, once and undeclared, by the next removal (an Error, or a checked exception as OkHttp
     * throws InterruptedException sneakily; an InterruptedIOException with the thread left
     * interrupted, as at a hook's deadline); that path stays on the target.
     */
    final java.util.concurrent.atomic.AtomicReference<Throwable> removeThrows = new java.util.concurrent.atomic.AtomicReference<>();

    HostBackend(Settings settings, StdinMode mode, boolean nativeEnv, List<dev.airlock.event.ExecListener> listeners) {
        this(settings, Capabilities.pipe().withStdinMode(mode).withNativeEnv(nativeEnv), listeners);
    }

    HostBackend(Settings settings, Capabilities caps, List<dev.airlock.event.ExecListener> listeners) {
        this(settings, caps, listeners, false);
    }

    /**
     * With {@code shellHooks} the backend offers no stager and no killer, so the core stages, removes,
     * reads groups and signals through its own shell scripts over raw runs, as a plugin that writes
     * only {@code launch} gets.
     */
    HostBackend(Settings settings, Capabilities caps, List<dev.airlock.event.ExecListener> listeners, boolean shellHooks) {
        this(settings, caps, listeners, shellHooks, b -> { });
    }

    /** {@code beforeOpen} sets up this backend (faults of the hooks at open, say) before the core opens on it. */
    HostBackend(Settings settings, Capabilities caps, List<dev.airlock.event.ExecListener> listeners, boolean shellHooks,
                java.util.function.Consumer<HostBackend> beforeOpen) {
        this.shellHooks = shellHooks;
        this.caps = caps.withArgvLimit(100 * 1024);
        beforeOpen.accept(this);
        this.env = CoreEnvironment.create(this, OpenContext.builder(settings).listeners(listeners).build());
        try {
            env.initialize();
        } catch (RuntimeException | Error e) {
            env.close(); // as OpenContext.open does: a failed open leaves no thread or process behind
            throw e;
        }
    }

    /** With FILES output: the host's files, enough of them for the core's download (read, stat, delete). */
    @Override
    public Optional<RemoteFiles> files() {
        return caps.outputTransport() == OutputTransport.FILES ? Optional.of(new HostFiles()) : Optional.empty();
    }

    /** Streamed stdin by offset, into the host process's pipe; refuses a gap or an overlap. */
    @Override
    public Optional<StdinWriter> stdinWriter() {
        return Optional.of(new StdinWriter() {
            @Override
            public void write(RemoteProcess p, long offset, byte[] data, int length, Deadline deadline) throws IOException {
                long expected = received.getOrDefault(p, 0L);
                if (offset != expected) {
                    throw new IOException("chunk at " + offset + ", expected " + expected);
                }
                received.put(p, offset + length);
                chunks.add(new long[] {offset, length});
                try {
                    p.stdin().write(data, 0, length);
                    p.stdin().flush();
                } catch (IOException e) {
                    // As a real transport reports it: the far side no longer reads (EPIPE).
                    throw new dev.airlock.spi.StdinClosedException("the command closed its stdin: " + e.getMessage());
                }
            }

            @Override
            public void end(RemoteProcess p, long length, Deadline deadline) throws IOException {
                stdinEnds.add(length);
                p.stdin().close();
            }
        });
    }

    @Override
    public String name() {
        return "host";
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public void close() {
        closes.incrementAndGet();
    }

    @Override
    public Optional<Stager> stager() {
        return shellHooks ? Optional.empty() : Optional.of(this);
    }

    @Override
    public Optional<Killer> killer() {
        return shellHooks ? Optional.empty() : Optional.of(this);
    }

    // The suites' common parts.

    /** Far above any stop bound here: only a hang exceeds it. */
    static final Duration HANG = Duration.ofSeconds(8);

    /**
     * Settings the suites share: no container, the private dir under {@code dir}, a short kill
     * grace and slack (the suites, and PIT, which runs them per mutant, wait out the stop bound
     * whenever a hook is stuck); then {@code more}, which wins.
     */
    static Settings settings(Path dir, String... more) {
        List<String> kv = new java.util.ArrayList<>(List.of("airlock.container", "no", "airlock.private-dir.base", dir.toString(),
                "airlock.kill.grace", "300ms", "airlock.kill.slack", "500ms"));
        kv.addAll(List.of(more));
        return Settings.of(kv.toArray(String[]::new));
    }

    /** The exec's result, failing the test when none came within {@link #HANG}. */
    static ExecResult within(Execution e) throws InterruptedException {
        Optional<ExecResult> r = e.await(HANG);
        org.junit.jupiter.api.Assertions.assertTrue(r.isPresent(), "no result: the exec hung");
        return r.get();
    }

    /** Releases every stalled hook, closes each environment and kills what it launched. */
    static void closeAll(List<HostBackend> opened) {
        for (HostBackend b : opened) {
            b.release.countDown();
            b.env.close();
            b.launched.forEach(Process::destroyForcibly);
        }
    }

    // The environment's side, for the tests.

    Execution start(ExecRequest r) {
        return env.start(r);
    }

    ExecResult exec(ExecRequest r) {
        return env.exec(r);
    }

    Target target() {
        return env.target();
    }

    void closeFromHook() {
        env.lifecycle().closeFromHook();
    }

    Reaper reaper() {
        return env.reaper();
    }

    GroupState groupState(long pgid) throws IOException {
        return groupState(pgid, Deadline.in(Duration.ofSeconds(10)));
    }

    @Override
    public Capabilities capabilities() {
        return caps;
    }

    private void fault(Fault f, String what) throws IOException {
        switch (f) {
            case NONE, LOSE -> {
            }
            case FAIL -> throw new IOException(what + " failed on request");
            case INTERRUPTED -> {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException(what + " interrupted at its deadline");
            }
            case INTERRUPTED_RETURNS -> Thread.currentThread().interrupt();
            case INTERRUPTED_PLAIN -> {
                Thread.currentThread().interrupt();
                throw new IOException(what + " failed, interrupted at its deadline");
            }
            case STALL -> {
                stalls.incrementAndGet();
                stalled.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    interrupted.add(what);
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException(what + " interrupted");
                }
            }
            case STALL_THEN_FAIL -> {
                fault(Fault.STALL_UNINTERRUPTIBLY, what);
                throw new IOException(what + " failed after its stall");
            }
            case STALL_UNINTERRUPTIBLY -> {
                stalls.incrementAndGet();
                stalled.countDown();
                boolean interrupted = false;
                while (true) {
                    try {
                        release.await();
                        break;
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    // The host steps, answered here (when asked to) the way the local backend answers them.

    @Override
    public Optional<byte[]> probe(String privateDirBase, java.util.Set<String> unset, Deadline deadline) {
        if (!answersHostSteps) {
            return Optional.empty();
        }
        hostStep(probe, "probe");
        try {
            String script = dev.airlock.containment.TargetProbe.script(privateDirBase, true);
            Process p = new ProcessBuilder("sh", "-c", script).redirectErrorStream(false).start();
            byte[] facts = p.getInputStream().readAllBytes();
            if (p.waitFor() != 0) {
                throw new IOException("the probe script failed");
            }
            byte[] hostname = ("hostname=" + ANSWERED_HOSTNAME + "\0").getBytes(StandardCharsets.UTF_8);
            byte[] answer = java.util.Arrays.copyOf(facts, facts.length + hostname.length);
            System.arraycopy(hostname, 0, answer, facts.length, hostname.length);
            return Optional.of(answer);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }

    @Override
    public boolean makeHome(String home, Deadline deadline) {
        if (!answersHostSteps) {
            return false;
        }
        hostStep(makeHome, "makeHome");
        try {
            Files.createDirectories(Path.of(home), java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                    java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
            return true;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public boolean removePrivateDir(String dir, Deadline deadline) {
        if (!answersHostSteps) {
            return false;
        }
        hostStep(removePrivateDir, "removePrivateDir");
        try (java.util.stream.Stream<Path> all = Files.walk(Path.of(dir))) {
            for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
            return true;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Records the step, then applies its fault (thrown unchecked: these hooks declare no IOException). */
    private void hostStep(Fault f, String what) {
        hostSteps.add(what);
        try {
            fault(f, what);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public void stage(String path, Payload data, Deadline deadline) throws IOException {
        if (stagedPaths.size() >= stagesBeforeFault) {
            fault(stage, "stage");
        }
        stagedPaths.add(path);
        RawResult r = env.runRaw(Shell.stageScript(path), data);
        if (r.exit() != 0) {
            throw new IOException("cat exited " + r.exit());
        }
    }

    /**
     * Removes a staged file as a remote transport does: a call made on an interrupted thread fails
     * at once with the file still there (OkHttp, and an NIO channel, refuse to start one).
     */
    @Override
    public void remove(String path, Deadline deadline) throws IOException {
        removedPaths.add(path);
        Throwable t = removeThrows.getAndSet(null);
        if (t != null) {
            if (t instanceof InterruptedIOException) {
                Thread.currentThread().interrupt(); // as a hook interrupted at its deadline leaves its thread
            }
            throw HostBackend.<RuntimeException>sneaky(t);
        }
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedIOException("the removal of " + path + " was called on an interrupted thread");
        }
        fault(removal, "remove");
        env.runRaw(Shell.removeScript(path), null);
    }

    @Override
    public Duration killStepCost() {
        return killStepCost;
    }

    /** A kill step's time ({@link #killStepMillis}), cut short by the hook's deadline as a remote call's would be. */
    private void slowKillStep() throws IOException {
        if (killStepMillis > 0) {
            try {
                Thread.sleep(killStepMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("the kill step was interrupted at its deadline");
            }
        }
    }

    @Override
    public GroupState groupState(long pgid, Deadline deadline) throws IOException {
        slowKillStep();
        return GroupState.parse(new String(env.runRaw(Shell.groupStateScript(pgid), null).stdout(), StandardCharsets.UTF_8));
    }

    @Override
    public void stopSandbox(Deadline deadline) {
        stops.incrementAndGet();
        try {
            fault(stop, "stop");
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage());
        }
    }

    @Override
    public void kill(RemoteProcess process, OptionalLong group, boolean force, Deadline deadline) throws IOException {
        signals.add((force ? "KILL " : "TERM ") + group.orElse(-1));
        slowKillStep();
        fault(kill, "kill");
        if ((force ? forceKillFailures : termFailures).getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new IOException("the " + (force ? "SIGKILL" : "SIGTERM") + " failed on request (a transient error)");
        }
        Fault f = force ? forceKill : term;
        fault(f, "kill");
        if (f == Fault.INTERRUPTED_RETURNS) {
            return; // the signal was never sent
        }
        env.runRaw(Shell.signalGroupScript(force ? "KILL" : "TERM", group.orElseThrow()), null);
    }

    @Override
    public RemoteProcess launch(Launch l, Deadline deadline) throws IOException {
        if (l.internal()) {
            scripts.incrementAndGet();
            scriptTexts.add(l.script());
            fault(script, "script");
            return start(l, script == Fault.LOSE); // the core's own scripts: probe, files, staging, kill
        }
        launchRequests.add(l.script());
        fault(launch, "launch");
        Path lostWhen = lostBeforeRecordWhen;
        if (recordNeverComes) {
            return withoutRecord(start(l, false));
        }
        return lostWhen != null ? lostBeforeRecord(start(l, false), lostWhen) : start(l, launch == Fault.LOSE);
    }

    @Override
    public boolean killsWithoutGroup() {
        return killsWithoutGroup;
    }

    /** {@code p} with no group of its own known and no output (its record with it), ending when it ends. */
    private static RemoteProcess withoutRecord(RemoteProcess p) {
        return new RemoteProcess() {
            @Override
            public OutputStream stdin() {
                return p.stdin();
            }

            @Override
            public InputStream stdout() {
                return InputStream.nullInputStream();
            }

            @Override
            public InputStream stderr() {
                return InputStream.nullInputStream();
            }

            @Override
            public int waitFor() throws InterruptedException {
                return p.waitFor();
            }

            @Override
            public OptionalLong processGroup() {
                return OptionalLong.empty();
            }
        };
    }

    private static RemoteProcess lostBeforeRecord(RemoteProcess p, Path lostWhen) {
        return new RemoteProcess() {
            @Override
            public OutputStream stdin() {
                return p.stdin();
            }

            @Override
            public InputStream stdout() {
                return InputStream.nullInputStream(); // the record went down with the connection
            }

            @Override
            public InputStream stderr() {
                return InputStream.nullInputStream();
            }

            @Override
            public int waitFor() throws InterruptedException {
                while (!Files.exists(lostWhen)) {
                    Thread.sleep(10);
                }
                return NO_STATUS;
            }

            @Override
            public OptionalLong processGroup() {
                return OptionalLong.empty();
            }
        };
    }

    private RemoteProcess start(Launch l, boolean lose) throws IOException {
        // The noise comes first for every launch, Airlock's own scripts too, on both streams, as a login shell's
        // startup files print it (sshd makes bash read ~/.bashrc; pyenv's rehash race prints on stderr).
        String script = (l.internal() || slowStart <= 0 ? "" : "sleep " + slowStart + "\n")
                + "printf %s '" + noise + "'; printf %s '" + noise + "' >&2\n"
                + (noiseBytes > 0 ? "head -c " + noiseBytes + " /dev/zero | tr '\\0' n | tee /dev/stderr\n" : "")
                + l.script();
        boolean wrapped = wrapperLeadsGroup && !l.internal();
        ProcessBuilder pb = wrapped
                // The wrapper leads the group and starts the command's shell in a later clock tick.
                ? new ProcessBuilder("setsid", "sh", "-c", "sleep 0.1; \"$0\" -c \"$1\"; exit $?", l.shell(), script)
                : new ProcessBuilder("setsid", l.shell(), "-c", script);
        Map<String, String> env = pb.environment();
        l.unset().forEach(env::remove);
        env.putAll(l.env());
        // stdin is always a pipe, as an ssh channel or a docker exec's is: a command without stdin
        // sees its end only because the core closes it.
        Process p = pb.start();
        if (l.script().contains("@airlock:")) {
            launched.add(p);
        }
        OptionalLong start = reportsStartTime ? startTime(p.pid()) : OptionalLong.empty();
        return new RemoteProcess() {
            @Override
            public OutputStream stdin() {
                return p.getOutputStream();
            }

            @Override
            public InputStream stdout() {
                return p.getInputStream();
            }

            @Override
            public InputStream stderr() {
                return p.getErrorStream();
            }

            @Override
            public int waitFor() throws InterruptedException {
                int s = p.waitFor();
                return lose ? NO_STATUS : s;
            }

            @Override
            public Optional<dev.airlock.AirlockException> lostReason() {
                return lose ? Optional.ofNullable(lostReason) : Optional.empty();
            }

            @Override
            public OptionalLong processGroup() {
                return OptionalLong.of(p.pid());
            }

            @Override
            public OptionalLong startTime() {
                return recycledIdentity && start.isPresent() ? OptionalLong.of(start.getAsLong() + 1) : start;
            }
        };
    }

    /** Throws {@code t} whatever it is, as code compiled from other languages may. */
    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }

    /** The staged files (env, stdin, scripts) still in the target's staging dir. */
    List<Path> stagedLeft() throws IOException {
        Path staging = Path.of(target().stagingDir());
        if (!Files.isDirectory(staging)) {
            return List.of();
        }
        try (java.util.stream.Stream<Path> s = Files.list(staging)) {
            return s.filter(p -> p.getFileName().toString().startsWith(".airlock-")).toList();
        }
    }

    static OptionalLong startTime(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return OptionalLong.of(Long.parseLong(f[19]));
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    static boolean alive(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return !stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Whether {@code pid} still runs code: alive, not exiting (PF_EXITING, 0x4 in the stat flags: in
     * the kernel's exit path after a fatal signal, which under load can take a while) and no SIGKILL
     * pending (the kernel tearing it down counts as gone).
     */
    static boolean runs(long pid) {
        if (!alive(pid)) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            if (fields.length > 6 && (Long.parseLong(fields[6]) & 4) != 0) {
                return false;
            }
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if ((line.startsWith("SigPnd:") || line.startsWith("ShdPnd:"))
                        && (Long.parseUnsignedLong(line.substring(7).strip(), 16) & (1L << 8)) != 0) {
                    return false;
                }
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The live (not zombie) processes of process group {@code pgid}, by pid, read from {@code /proc}. */
    static List<Long> groupMembers(long pgid) {
        List<Long> out = new java.util.ArrayList<>();
        java.io.File[] procs = new java.io.File("/proc").listFiles((d, n) -> n.chars().allMatch(Character::isDigit));
        for (java.io.File f : procs == null ? new java.io.File[0] : procs) {
            try {
                String stat = Files.readString(f.toPath().resolve("stat"));
                String[] rest = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                if (!rest[0].equals("Z") && Long.parseLong(rest[2]) == pgid) {
                    out.add(Long.parseLong(f.getName()));
                }
            } catch (IOException | RuntimeException e) {
                // gone meanwhile
            }
        }
        return out;
    }

    /** Kills, by pid, what is left of the group a test's command ran in (the test started it). */
    static void killGroupMembers(long pgid) {
        for (long pid : groupMembers(pgid)) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    /** Waits until this backend launched a user command (its shell may still be in a slow start). */
    void awaitLaunched() throws InterruptedException {
        long until = System.nanoTime() + HANG.toNanos();
        while (launched.isEmpty()) {
            org.junit.jupiter.api.Assertions.assertTrue(System.nanoTime() < until, "never launched");
            Thread.sleep(10);
        }
    }

    static void await(CountDownLatch l) throws InterruptedException {
        if (!l.await(20, TimeUnit.SECONDS)) {
            throw new AssertionError("the hook was never reached");
        }
    }

    /** Host files for the FILES download: read, stat and delete; the rest is not the test's. */
    private static final class HostFiles implements RemoteFiles {
        @Override
        public InputStream read(String path) {
            try {
                return Files.newInputStream(Path.of(path));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public Optional<FileStat> stat(String path) {
            Path p = Path.of(path);
            if (!Files.exists(p)) {
                return Optional.empty();
            }
            try {
                return Optional.of(new FileStat(path, p.getFileName().toString(), FileStat.Type.FILE, Files.size(p), 0600,
                        Files.getLastModifiedTime(p).toInstant()));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public boolean delete(String path) {
            try {
                return Files.deleteIfExists(Path.of(path));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public void write(String path, Payload content, dev.airlock.WriteOptions options) {
            throw new UnsupportedOperationException("not in the test backend");
        }

        @Override
        public List<FileStat> list(String dir) {
            throw new UnsupportedOperationException("not in the test backend");
        }

        @Override
        public void mkdirs(String dir) {
            throw new UnsupportedOperationException("not in the test backend");
        }

        @Override
        public void copyIn(String dir, InputStream tar) {
            throw new UnsupportedOperationException("not in the test backend");
        }

        @Override
        public InputStream copyOut(String dir) {
            throw new UnsupportedOperationException("not in the test backend");
        }
    }
}
