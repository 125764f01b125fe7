package dev.airlock.vercel;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.Capabilities;
import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.Payload;
import dev.airlock.PortSupport;
import dev.airlock.Ports;
import dev.airlock.RemoteFiles;
import dev.airlock.StdinMode;
import dev.airlock.shell.Shell;
import dev.airlock.spi.Backend;
import dev.airlock.spi.CoreAccess;
import dev.airlock.spi.Deadline;
import dev.airlock.spi.GroupState;
import dev.airlock.spi.Killer;
import dev.airlock.spi.Launch;
import dev.airlock.spi.OpenContext;
import dev.airlock.spi.PortForwarder;
import dev.airlock.spi.RemoteProcess;
import dev.airlock.spi.ResourceLabels;
import dev.airlock.spi.SnapshotLedger;
import dev.airlock.spi.Stager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A Vercel sandbox session as a backend: the glue between the core's hooks and
 * {@link VercelApi}. Commands run as {@code sh -c SCRIPT} with their variables set natively (the
 * command's {@code env}); stdin is staged by the core (PAYLOAD) through {@code fs/write} with a
 * 0600 tar header; output goes to two files in a 0700
 * dir of this environment and is read back with {@code fs/read} once the command ended (Vercel's
 * logs are text, not bytes). The core has no FILES output transport yet, so {@link #launch} does
 * that redirect itself.
 */
final class VercelBackend implements Backend, Stager, Killer {
    private static final Logger LOG = LoggerFactory.getLogger(VercelBackend.class);
    static final String TAG = "airlock";
    /** Vercel's spelling of core's labels: {@code airlock-owner}, {@code airlock-created}, ... */
    static final String LABEL_PREFIX = "airlock-";

    /** A hang guard on the wait for the outputs, not a timing: a reader that stopped reading. */
    private static final Duration DRAIN_MAX = Duration.ofMinutes(10);
    /** The deadline of removing what a file write staged (a command, else an upload of nothing). */
    private static final Duration REMOVE_BOUND = Duration.ofMinutes(1);

    private final VercelApi api;
    private final boolean attached;
    private final String sandboxName;
    /** Where each snapshot taken is recorded, so gc can delete it once nothing needs it. */
    private final SnapshotLedger ledger;
    private final VercelSettings settings;
    /** The sandbox's current session: a snapshot stops it and the sandbox goes on in a new one. */
    private volatile String sessionId;
    /** Each exposed port's route URL, as the service's last answer about the sandbox gave it. */
    private volatile Map<Integer, String> routes;
    /** A snapshot was taken: the sandbox's delete leaves its snapshots (they are what the caller keeps). */
    private volatile boolean snapshotsTaken;
    /** The close stopped the session already, with the private dir ({@link #removePrivateDir}). */
    private volatile boolean stoppedForClose;
    /** The close removed the output dir already, with the private dir ({@link #removePrivateDir}). */
    private volatile boolean outputRemoved;
    private final String outputDir;
    private final ScheduledExecutorService background;
    /**
     * One thread per command waiting for its end (a wait blocks for as long as the command runs).
     * Unbounded on purpose: a bounded pool let two long commands starve the wait of the kill's
     * own group check, so close() waited forever for a kill that could not finish.
     */
    private final ExecutorService waits;
    private volatile CoreAccess core;
    /** Made when the core is bound: they fall back on its shell implementation. */
    private volatile VercelFiles files;
    private final AtomicLong execs = new AtomicLong();
    /** Output files of ended commands, read to their end: the next launch's wrapper removes them. */
    private final java.util.Queue<String> released = new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Exits not known yet: ended (lost) when the sandbox stops, so no reader waits on a gone sandbox. */
    private final java.util.Set<CompletableFuture<Integer>> pending = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private VercelBackend(VercelSettings s, VercelApi api, VercelApi.SessionInfo info, boolean attached, SnapshotLedger ledger) {
        this.api = api;
        this.ledger = ledger;
        this.settings = s;
        this.attached = attached;
        this.sandboxName = info.sandboxName();
        this.sessionId = info.sessionId();
        this.routes = info.routes();
        this.outputDir = "/tmp/.airlock-vercel-" + UUID.randomUUID().toString().substring(0, 12);
        this.background = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "airlock-vercel-" + sandboxName);
            t.setDaemon(true);
            return t;
        });
        this.waits = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "airlock-vercel-wait-" + sandboxName);
            t.setDaemon(true);
            return t;
        });
        // Keep the session alive while the environment is open: extend by half the timeout every half.
        Duration every = s.timeout().dividedBy(2);
        background.scheduleAtFixedRate(() -> {
            try {
                api.extend(sessionId, every);
            } catch (RuntimeException e) {
                LOG.debug("could not extend the sandbox {}: {}", sandboxName, e.getMessage());
            }
        }, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    static Environment open(OpenContext context, VercelSettings s, SnapshotLedger ledger) {
        VercelApi api = new VercelApi(s, context.settings());
        VercelApi.SessionInfo info = null;
        boolean attached = s.sandboxId().isPresent();
        try {
            if (attached) {
                String name = s.sandboxId().get();
                info = api.sandbox(name).orElseThrow(() -> new ConfigurationException("there is no Vercel sandbox named "
                        + name + " (" + VercelSettings.SANDBOX_ID + "); `airlock --backend vercel up` makes one"));
            } else {
                info = api.create(tags(false));
            }
            // A new sandbox's create answer says how its session is: one that runs already needs no poll.
            String status = attached ? api.session(info.sessionId()).status()
                    : info.status().equals("running") ? "running" : "pending";
            if (!status.equals("running") && !status.equals("pending")) {
                throw VercelApi.ended(info.sandboxName(), status, null);
            }
            if (!status.equals("running")) {
                // An attached sandbox's session may end while it is waited for (its ttl): the ended line then too.
                awaitRunning(api, info.sessionId(), attached ? info.sandboxName() : null);
            }
        } catch (RuntimeException e) {
            if (info != null && !attached) {
                removeQuietly(api, info);
            }
            api.close();
            throw e;
        }
        return context.open(new VercelBackend(s, api, info, attached, ledger));
    }

    /** The backend of {@code env}, a vercel environment (for tests). */
    static VercelBackend of(Environment env) {
        return OpenContext.backendOf(env, VercelBackend.class)
                .orElseThrow(() -> new IllegalArgumentException(env.name() + " is not a vercel environment"));
    }

    @Override
    public String name() {
        return "vercel";
    }

    @Override
    public String id() {
        return sandboxName;
    }

    @Override
    public void bind(CoreAccess core) {
        this.core = core;
        // The file scripts are short and their output a message: one call each, not a launch's
        // start, wait and output downloads.
        this.files = new VercelFiles(api, () -> sessionId, core.shellFiles(), script -> api.runToEnd(sessionId, List.of("sh", "-c", script)),
                path -> core.target().expand(path), () -> core.target().stagingDir(),
                path -> remove(path, Deadline.in(REMOVE_BOUND)), "vercel");
    }

    /**
     * The sandbox's tags: {@link #TAG}{@code =1} (what gc lists by) and core's {@link ResourceLabels}
     * behind {@link #LABEL_PREFIX}, so gc removes only this owner's orphans.
     */
    static Map<String, String> tags(boolean kept) {
        Map<String, String> t = new TreeMap<>(ResourceLabels.now(kept).asMap(LABEL_PREFIX));
        t.put(TAG, "1");
        return t;
    }

    /** Polls the session until it runs; a session that failed or stopped is an error. */
    static void awaitRunning(VercelApi api, String sessionId) {
        awaitRunning(api, sessionId, null);
    }

    /**
     * Polls the session until it runs; a session that failed or stopped is an error, the sandbox's
     * ended line when it is {@code attachedName}'s (an {@code up} sandbox whose ttl ran out).
     */
    static void awaitRunning(VercelApi api, String sessionId, String attachedName) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (true) {
            String status = api.session(sessionId).status();
            switch (status) {
                case "running":
                    return;
                case "pending":
                    break;
                default:
                    if (attachedName != null) {
                        throw VercelApi.ended(attachedName, status, null);
                    }
                    throw new BackendException("the Vercel sandbox session " + sessionId + " is " + status
                            + " instead of running; open a new environment");
            }
            if (System.nanoTime() > deadline) {
                throw new BackendException("the Vercel sandbox session " + sessionId + " was still pending after 2 minutes");
            }
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BackendException("interrupted while waiting for the Vercel sandbox to start");
            }
        }
    }

    static void removeQuietly(VercelApi api, VercelApi.SessionInfo info) {
        try {
            api.stop(info.sessionId());
            api.delete(info.sandboxName());
        } catch (AirlockException e) {
            LOG.warn("could not remove the Vercel sandbox {}: {}", info.sandboxName(), e.getMessage());
        }
    }

    @Override
    public Capabilities capabilities() {
        return Capabilities.builder().stdinMode(StdinMode.PAYLOAD).attachable(true).disposable(!attached)
                .nativeEnv(true).networkModes(VercelSettings.NETWORK_MODES).ports(PortSupport.DECLARED).snapshots(true).build();
    }

    /**
     * A port's route: the URL the service gave for it (create's answer, or sandbox-get's for an
     * attached sandbox), exactly. A port the sandbox was not created with has none, and a running
     * sandbox takes no new one here: one line saying how to declare it.
     */
    @Override
    public Optional<PortForwarder> portForwarder() {
        return Optional.of((port, deadline) -> {
            Map<Integer, String> now = routes;
            String url = now.get(port);
            if (url == null) {
                throw new ConfigurationException("port " + port + " is not routed by the Vercel sandbox " + sandboxName + " ("
                        + (now.isEmpty() ? "it routes none" : "it routes " + now.keySet().stream().map(String::valueOf)
                        .collect(java.util.stream.Collectors.joining(","))) + "); ports are declared when the sandbox is"
                        + " created: open one with " + Ports.KEY + "=" + port + " (airlock up --port " + port + ")");
            }
            return java.net.URI.create(url);
        });
    }

    /** See {@link VercelSnapshot}: the session stops, and the environment goes on in a new one booted from the snapshot. */
    @Override
    public String snapshot(String privateDir, Deadline deadline) throws IOException {
        snapshotsTaken = true;
        return new VercelSnapshot(api, sandboxName, this::recordSnapshot).take(sessionId, privateDir, outputDir, next -> {
            sessionId = next.sessionId();
            if (!next.routes().isEmpty()) {
                routes = next.routes();
            }
        });
    }

    /**
     * Records a snapshot the service just made in the ledger, before the sandbox resumes (so one
     * whose resume fails is collected too). A ledger that cannot be written fails nothing: the
     * snapshot is the caller's either way, only gc will not know it.
     */
    private void recordSnapshot(String id) {
        try {
            ledger.record(id, VercelProvider.ledgerSource(settings, sandboxName), java.time.Instant.now());
        } catch (RuntimeException e) { // unwritable, a bad id, a lock this JVM holds through another path: the snapshot stands
            // The cause's kind too: a file system's message is at times only the path it failed on.
            String kind = e.getCause() == null ? "" : " (" + e.getCause().getClass().getSimpleName() + ")";
            LOG.warn("the Vercel snapshot {} will not be collected by 'airlock gc': {}{}", id, e.getMessage(), kind);
        }
    }

    // ---------------------------------------------------------------- hooks

    @Override
    public Optional<RemoteFiles> files() {
        return Optional.ofNullable(files);
    }

    @Override
    public RemoteProcess launch(Launch launch, Deadline deadline) throws IOException {
        String base = outputDir + "/" + execs.incrementAndGet();
        String out = base + ".out";
        String err = base + ".err";
        // FILES output: the bytes land in files read back exactly; the redirect precedes the core's script.
        String pid = base + ".pid";
        // The group's id goes to a file first: the kill can find the group before the launcher
        // record has been read back from the output (it is polled), see kill().
        String wrapper = "(umask 077 && mkdir -p " + Shell.quotePath(outputDir) + ") || exit 125\n"
                + leftovers() + unsetLine(launch)
                + "echo \"$$\" > " + Shell.quotePath(pid) + "\n"
                + "exec >" + Shell.quotePath(out) + " 2>" + Shell.quotePath(err) + "\n" + launch.script();
        // Started with wait: the answer's last line is the exit, so the end costs no call of its own.
        VercelApi.Started started = api.start(sessionId, argv(launch.shell(), wrapper), null, launch.env());
        String cmdId = started.id;
        CompletableFuture<Integer> exit;
        try {
            exit = CompletableFuture.supplyAsync(() -> api.awaitStarted(sessionId, started), waits);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            started.close();
            throw new EnvironmentClosedException("the Vercel environment is closed; open a new one");
        }
        pending.add(exit);
        exit.whenComplete((v, e) -> pending.remove(exit));
        return new Process(cmdId, out, err, pid, exit);
    }

    /**
     * The variables the command must not inherit ({@link Launch#unset}), removed by the wrapper;
     * those it sets are sent with the command ({@code env} in the body, which the service sets on
     * top of the sandbox's), not staged in a file: one upload fewer a command.
     */
    private static String unsetLine(Launch launch) {
        StringBuilder names = new StringBuilder();
        for (String name : new java.util.TreeSet<>(launch.unset())) {
            if (!launch.env().containsKey(name) && name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                names.append(' ').append(name);
            }
        }
        return names.isEmpty() ? "" : "unset" + names + "\n";
    }

    /**
     * {@code rm -f} of the output files of commands that ended and were read (at most 300 names a
     * launch, so a script stays small), as a line of the next command's wrapper.
     */
    private String leftovers() {
        StringBuilder rm = new StringBuilder();
        String f;
        for (int i = 0; i < 300 && (f = released.poll()) != null; i++) {
            rm.append(' ').append(Shell.quotePath(f));
        }
        return rm.isEmpty() ? "" : "rm -f --" + rm + "\n";
    }

    /**
     * {@code SHELL -c SCRIPT} as the leader of its own process group, which the launcher record
     * names and the core's kill signals: the service starts commands under its own process manager
     * (the emulator under bubblewrap), whose child may not be a group leader. Every step execs, so
     * no process of ours stays the command's parent (one the command could kill, stop or rewrite to
     * report another status): a leader already runs the shell as it is, another one execs setsid,
     * which does not fork for a non-leader ({@code -w} keeps the status where /proc cannot say).
     */
    static List<String> argv(String shell, String script) {
        // No shell variable of its own: the command's variables (set natively) reach it unchanged.
        return List.of("sh", "-c", "[ \"$(cut -d' ' -f5 /proc/$$/stat 2>/dev/null)\" = \"$$\" ] ||"
                + " { command -v setsid >/dev/null 2>&1 && exec setsid -w \"$@\"; }; exec \"$@\"", "airlock",
                shell, "-c", script);
    }

    @Override
    public Optional<Stager> stager() {
        return Optional.of(this);
    }

    @Override
    public void stage(String path, Payload data, Deadline deadline) throws IOException {
        if (data.length().isPresent() && data.isRepeatable()) {
            long size = data.length().getAsLong();
            api.write(sessionId, path, 0600, new VercelApi.TarSource() {
                @Override
                public long size() {
                    return size;
                }

                @Override
                public void writeTo(OutputStream o) throws IOException {
                    try (InputStream in = data.open()) {
                        copyExactly(in, o, size);
                    }
                }
            });
            return;
        }
        // A stream is read once: spool it to a 0600 file so a retried upload sends the same bytes.
        Path spool = Files.createTempFile("airlock-vercel-stage-", ".bin",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            try (InputStream in = data.open(); OutputStream o = Files.newOutputStream(spool)) {
                in.transferTo(o);
            }
            long size = Files.size(spool);
            api.write(sessionId, path, 0600, new VercelApi.TarSource() {
                @Override
                public long size() {
                    return size;
                }

                @Override
                public void writeTo(OutputStream o) throws IOException {
                    try (InputStream in = Files.newInputStream(spool)) {
                        copyExactly(in, o, size);
                    }
                }
            });
        } finally {
            Files.deleteIfExists(spool);
        }
    }

    /**
     * There is no delete endpoint: {@code rm -f} through a command, and when that cannot run the
     * staged file is overwritten with an empty one, so its bytes are gone either way.
     */
    @Override
    public void remove(String path, Deadline deadline) throws IOException {
        try {
            core.shellStager().remove(path, deadline);
            return;
        } catch (IOException | AirlockException e) {
            LOG.debug("rm of {} failed ({}); overwriting it with nothing", path, e.getMessage());
        }
        api.write(sessionId, path, 0600, new VercelApi.TarSource() {
            @Override
            public long size() {
                return 0;
            }

            @Override
            public void writeTo(OutputStream o) {
            }
        });
    }

    /** One second a kill step: a signal here is a command run through the API (create, then wait), often two or three calls, across the internet. */
    @Override
    public java.time.Duration killStepCost() {
        return java.time.Duration.ofSeconds(1);
    }

    @Override
    public Optional<Killer> killer() {
        return Optional.of(this);
    }

    /**
     * The kill endpoint signals the command's own process; its children are reached through the
     * process group the launcher record names (the core checked it is still the command's), signalled
     * by a second command. When the core has no group yet (the record is read back from the output
     * file, which is polled, and a short timeout can come first), the group is the one the wrapper
     * wrote to its pid file before anything else ran (asked within the kill grace of the command's
     * stop, when that group is still the command's or gone).
     */
    @Override
    public void kill(RemoteProcess process, OptionalLong group, boolean force, Deadline deadline) throws IOException {
        Process p = (Process) process;
        if (group.isPresent()) {
            core.shellKiller().kill(process, group, force, deadline);
        } else {
            // No record read yet (a timeout right after the start): the group from the pid file.
            core.run("g=$(cat -- " + Shell.quotePath(p.pid) + " 2>/dev/null) && [ -n \"$g\" ] && kill -"
                    + (force ? "KILL" : "TERM") + " -\"$g\" 2>/dev/null\nexit 0\n", null);
        }
        api.kill(sessionId, p.cmdId, force ? 9 : 15);
    }

    @Override
    public GroupState groupState(long pgid, Deadline deadline) throws IOException {
        return core.shellKiller().groupState(pgid, deadline);
    }

    /**
     * The private dir of a sandbox this environment made and keeps nothing of (not persistent, not
     * attached) goes with its session: the session is stopped here, the stop the close would send
     * next (not sent again there), where the core's {@code rm -rf} would be one command more before
     * it. A session that stopped runs nothing and serves no file again, and a non-persistent
     * sandbox keeps no file system past its session. A persistent one would snapshot it, and an
     * attached one goes on: there one command removes the private dir and this environment's output
     * dir together ({@link #REMOVE_DIRS}, answered in its own call), where the core's script and
     * the output dir's removal at {@link #stopSandbox} were a command each. What fails here is left
     * to the core's script.
     */
    @Override
    public boolean removePrivateDir(String dir, Deadline deadline) {
        try {
            if (attached || settings.persistent()) {
                if (api.runToEnd(sessionId, List.of("sh", "-c", REMOVE_DIRS, "airlock", dir, outputDir)).exit() != 0) {
                    return false;
                }
                outputRemoved = true;
                return true;
            }
            api.stop(sessionId);
            stoppedForClose = true;
            return true;
        } catch (RuntimeException e) {
            LOG.debug("could not end the private dir of the Vercel sandbox {}: {}", sandboxName, e.getMessage());
            return false;
        }
    }

    /** {@code sh -c REMOVE_DIRS airlock DIR DIR}: both removed, exit 0 only when neither is left. */
    private static final String REMOVE_DIRS = "rm -rf -- \"$1\" \"$2\"\n"
            + "[ ! -e \"$1\" ] && [ ! -L \"$1\" ] && [ ! -e \"$2\" ] && [ ! -L \"$2\" ]\n";

    @Override
    public void stopSandbox(Deadline deadline) {
        background.shutdownNow();
        waits.shutdownNow();
        for (CompletableFuture<Integer> exit : pending) {
            exit.completeExceptionally(new BackendException("the Vercel environment closed before the command's end was known"));
        }
        try {
            if (attached) {
                if (!outputRemoved) {
                    api.run(sessionId, List.of("rm", "-rf", "--", outputDir), null);
                }
            } else {
                if (!stoppedForClose) {
                    api.stop(sessionId);
                }
                api.delete(sandboxName, !snapshotsTaken);
            }
        } finally {
            api.close();
        }
    }

    private static void copyExactly(InputStream in, OutputStream o, long size) throws IOException {
        byte[] buf = new byte[65536];
        long left = size;
        while (left > 0) {
            int n = in.read(buf, 0, (int) Math.min(buf.length, left));
            if (n < 0) {
                throw new IOException("the payload ended " + left + " bytes before its declared length");
            }
            o.write(buf, 0, n);
            left -= n;
        }
        if (in.read() >= 0) {
            throw new IOException("the payload is longer than its declared length " + size);
        }
    }

    /**
     * {@code sh -c SURVIVORS airlock PGID PIDFILE OUT ERR}: removes the three files, then exits 0
     * when group {@code PGID} (the launcher record's, never the pid file's: the command can rewrite
     * that) has no live process left (zombies are not), 1 when it has.
     */
    private static final String SURVIVORS = "g=$1; rm -f -- \"$2\" \"$3\" \"$4\"\n" + Shell.groupHasLiveMemberScript();

    /** A detached command: its exit from the wait loop, its output from two files once it ended. */
    private final class Process implements RemoteProcess {
        final String cmdId;
        private final String out;
        private final String err;
        private final String pid;
        private final CompletableFuture<Integer> exit;
        /** Both outputs read to their end (or failed): the end is reported only then, see {@link #waitFor}. */
        private final CountDownLatch drained = new CountDownLatch(2);
        private final OutputFile stdout;
        private final OutputFile stderr;
        /** The output files are gone already ({@link #hasSurvivors} removed them). */
        private volatile boolean removed;

        Process(String cmdId, String out, String err, String pid, CompletableFuture<Integer> exit) {
            this.cmdId = cmdId;
            this.out = out;
            this.err = err;
            this.pid = pid;
            this.exit = exit;
            this.stdout = new OutputFile(api, sessionId, out, exit, drained::countDown);
            this.stderr = new OutputFile(api, sessionId, err, exit, drained::countDown);
        }

        @Override
        public OutputStream stdin() {
            return OutputStream.nullOutputStream();
        }

        @Override
        public InputStream stdout() {
            return stdout;
        }

        @Override
        public InputStream stderr() {
            return stderr;
        }

        /**
         * The exit status, once the output files were read to their end too: the output is
         * downloaded after the exit, and the core gives a pipe only a short grace after the end
         * (for a background job holding it), which a download of a large or slow file outlasts.
         * The files have an end (a background job's later bytes are not waited for), and a failed
         * download ends its stream, so this is bounded; {@link #DRAIN_MAX} guards against a reader
         * that stopped reading.
         */
        @Override
        public int waitFor() throws InterruptedException {
            try {
                int code = exit.get();
                if (!drained.await(DRAIN_MAX.toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.warn("the output of command {} was not read within {}", cmdId, DRAIN_MAX);
                }
                if (stdout.cutShort() || stderr.cutShort()) {
                    // Its output could not be read to the end: a lost end fails the exec with a typed
                    // error, where the real code would pass the short output for the whole.
                    LOG.debug("the output of command {} could not be read to its end", cmdId);
                    return NO_STATUS;
                }
                return code;
            } catch (ExecutionException e) {
                LOG.debug("lost the command {}: {}", cmdId, e.getCause().getMessage());
                return NO_STATUS;
            }
        }

        @Override
        public OptionalLong processGroup() {
            return OptionalLong.empty();
        }

        /**
         * The session ended under the command (a 410 on its wait, or on the reads of its output
         * after the wait): the ended line ({@link VercelApi#ended}, or the stopped session's), not a
         * lost connection.
         */
        @Override
        public Optional<AirlockException> lostReason() {
            Throwable waited = null;
            if (exit.isCompletedExceptionally()) {
                try {
                    exit.getNow(null);
                } catch (CompletionException | CancellationException e) {
                    waited = e;
                }
            }
            for (Throwable failure : Arrays.asList(waited, stdout.cutBy(), stderr.cutBy())) {
                for (Throwable t = failure; t != null; t = t.getCause()) {
                    if (t instanceof BackendUnavailableException || t instanceof EnvironmentClosedException) {
                        return Optional.of((AirlockException) t);
                    }
                }
            }
            return Optional.empty();
        }

        /**
         * The output is files read to the end they had at the exit, so a job left running shows in
         * neither: one command, run once both were read, answers whether the group still has a
         * process, and removes the output files on the way. Where the core would read the group
         * through a whole exec of its own (a command, its wait and two file reads), and remove
         * the files in one more. The group is the launcher record's, which the core passes: the
         * pid file is the command's to rewrite. Unknown (the command failed) counts as yes: the
         * core's kill then reads the group itself.
         */
        @Override
        public boolean hasSurvivors(OptionalLong group) {
            if (group.isEmpty()) {
                return false; // no launcher record: the command never ran, and release() removes the files
            }
            try {
                int code = api.runToEnd(sessionId,
                        List.of("sh", "-c", SURVIVORS, "airlock", Long.toString(group.getAsLong()), pid, out, err)).exit();
                removed = true;
                return code != 0;
            } catch (RuntimeException e) {
                LOG.debug("could not ask whether command {} left processes: {}", cmdId, e.getMessage());
                return true;
            }
        }

        @Override
        public void release() {
            if (removed) {
                return;
            }
            // Removed by the next command's wrapper, not by a command of their own (a round trip
            // each); the private dir goes with the sandbox, or at an attached one's close.
            released.add(out);
            released.add(err);
            released.add(pid);
        }
    }
}
